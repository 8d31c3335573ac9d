/** `fleet status`, pure (contract §7): host states, attention reasons, exit-code precedence. */
import { expect } from 'chai';
import {
  assembleStatus,
  FleetError,
  formatAge,
  newestReportName,
  statusExitCode,
  type NodeSummaryResponse,
  type StatusHostState,
  type StatusInput,
} from '../src/index.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const node = (overrides: Partial<NodeSummaryResponse> = {}): NodeSummaryResponse => ({
  nodeId: 'a',
  package: '@fleet/cli',
  version: '1.2.0',
  build: { sha256: null, commit: null },
  protocol: 1,
  startedAt: '2026-12-01T00:00:00.000Z',
  health: 'ok',
  runtime: { journal: 'empty', busy: false, attention: 'none', transaction: null },
  ...overrides,
});
const input = (
  outcome: StatusInput['hosts'][number]['outcome'],
  extra: Partial<StatusInput> = {},
): StatusInput => ({
  manifest: { canonicalVersion: '1.2.0', artifacts: [] },
  repoCommit: null,
  now: NOW,
  hosts: [{ host: 'a', outcome }],
  drift: null,
  reconcile: null,
  ...extra,
});
const fail = (code: ConstructorParameters<typeof FleetError>[0]) => ({
  ok: false as const,
  error: new FleetError(code, 'x'),
});

describe('fleet status', () => {
  const exits: [StatusHostState[], number][] = [
    [[], 0],
    [['ok', 'ok'], 0],
    [['ok', 'attention'], 1],
    [['error', 'ok'], 1],
    [['attention', 'unreachable'], 5],
    [['unreachable', 'denied', 'attention'], 4],
    [['denied'], 4],
  ];
  for (const [states, code] of exits) {
    it(`exit ${code} for [${states.join(', ')}]`, () =>
      expect(statusExitCode(states)).to.equal(code));
  }

  const hosts: [string, StatusInput, StatusHostState, RegExp | null][] = [
    ['a current host', input({ ok: true, value: node() }), 'ok', null],
    [
      'an older runtime',
      input({ ok: true, value: node({ version: '1.1.0' }) }),
      'attention',
      /runtime 1\.1\.0 is stale/,
    ],
    [
      'a degraded host',
      input({ ok: true, value: node({ health: 'degraded' }) }),
      'attention',
      /health degraded \(fleet version shows the checks\)/,
    ],
    [
      'a degraded host with its failing checks: each named with why',
      input({
        ok: true,
        value: node({ health: 'degraded' }),
        failing: [
          {
            name: 'audit-log',
            detail: '2 record(s) could not be appended since 2026-12-01T00:00:00.000Z (ENOSPC)',
          },
        ],
      }),
      'attention',
      /^health degraded: audit-log: 2 record\(s\) could not be appended since .* \(ENOSPC\)$/m,
    ],
    [
      'a transaction needing recovery',
      input({
        ok: true,
        value: node({
          runtime: {
            journal: 'ok',
            busy: false,
            attention: 'recovery-required',
            transaction: {
              id: 't1',
              kind: 'upgrade',
              lastStep: 'activated',
              at: NOW.toISOString(),
              outcome: null,
            },
          },
        }),
      }),
      'attention',
      /t1 \(upgrade\) needs recovery at "activated"/,
    ],
    [
      'offline_pending in the reconcile state',
      input(fail('HOST_UNREACHABLE'), {
        reconcile: {
          lastRun: NOW.toISOString(),
          pending: new Map([['a', { first_seen: '2026-11-30T00:00:00Z', last_seen: 'x' }]]),
        },
      }),
      'unreachable',
      /offline_pending since 2026-11-30/,
    ],
    ['a refused token', input(fail('AUTH_REVOKED')), 'denied', null],
    ['a timeout', input(fail('REQUEST_TIMEOUT')), 'unreachable', null],
    ['a node in recovery', input(fail('RECOVERY_REQUIRED')), 'error', null],
  ];
  for (const [name, given, state, reason] of hosts) {
    it(`${name}: ${state}`, () => {
      const [host] = assembleStatus(given).hosts;
      expect(host?.state).to.equal(state);
      if (reason) expect(host?.attention.join('\n')).to.match(reason);
      else expect(host?.attention).to.deep.equal([]);
    });
  }

  it('takes the host’s state and the age from the drift report', () => {
    const report = assembleStatus(
      input(
        { ok: true, value: node() },
        {
          drift: {
            path: 'reports/drift/2026-12-01/drift-2.json',
            report: {
              schema: 'fleet.drift/v1',
              generatedAt: '2026-12-01T11:00:00.000Z',
              repoCommit: 'c',
              canonicalVersion: '1.2.0',
              summary: { hosts: 1, current: 0, drifted: 1, unreachable: 0, errors: 0 },
              hosts: [{ host: 'a', status: 'drifted', items: [] }],
            },
          },
        },
      ),
    );
    expect(report.hosts[0]?.drift).to.deep.equal({
      state: 'drifted',
      generatedAt: '2026-12-01T11:00:00.000Z',
      ageSeconds: 3600,
    });
    expect(report.hosts[0]?.state).to.equal('attention');
    expect(report.drift.report).to.equal('reports/drift/2026-12-01/drift-2.json');
  });

  it('picks the newest report of a day by its suffix', () => {
    expect(
      newestReportName(['drift.json', 'drift.md', 'drift-2.json', 'drift-10.json', 'drift-3.html']),
    ).to.equal('drift-10.json');
    expect(newestReportName(['drift.json'])).to.equal('drift.json');
    expect(newestReportName(['version.json', 'drift-0.json', 'drift-x.json'])).to.equal(undefined);
  });

  it('formats ages for one screen', () => {
    expect([40, 60, 7200, 90_000].map(formatAge)).to.deep.equal(['40s', '1m', '2h', '1d']);
  });
});
