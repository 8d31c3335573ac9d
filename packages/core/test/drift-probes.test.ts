/**
 * Drift's probers (contract §8.1, §14): each host's domain probers ride in the same request as its
 * files (one request per host), their items join the file items; a prober that fails is one
 * `error` item. Plus the install parameters and action ids the operator sends (derived paths, the
 * reload's node policy action id) and fleet.yaml's `domains.<domain>.reload`.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  runDrift,
  type ProbeAnswer,
  type ProberRuntime,
  type ReadSnapshot,
} from '../src/config/drift.js';
import { installActions, installParameters, probeParameters } from '../src/config/parameters.js';
import { domainRuntime } from '../src/config/domain-runtime.js';
import { createGit } from '../src/git.js';
import { FleetError } from '../src/errors.js';
import { loadRepo, parseManifest } from '../src/repo/load.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import type { JsonValue } from '../src/interfaces/drift.js';

const declaration: DomainDeclaration = {
  domain: 'demo',
  description: 'demo',
  files: [
    { id: 'app.conf', path: '~/.app.conf', canonical: 'app.conf', kind: 'whole', format: 'text' },
  ],
  derivedPaths: [
    {
      id: 'copy',
      path: '~/.cache/app.conf',
      pathVariable: 'copy_path',
      format: 'text',
      derivedFrom: 'app.conf',
      description: 'an installed copy',
    },
  ],
  hostVariables: ['node_id', 'copy_path'],
  coupling: { kind: 'process', actions: [{ kind: 'write-copy', description: 'copy' }] },
};

const MANIFEST = `apiVersion: fleet/v1
canonicalVersion: 1.0.0
hosts:
  alpha: { controller: "http://127.0.0.1:7701", platform: linux, supervisor: lab, domains: [demo] }
  beta: { controller: "http://127.0.0.1:7702", platform: linux, supervisor: lab, domains: [demo] }
domains:
  demo: { reload: app-reload }
`;

/** A prober that reports the copy stale when the node says so. */
const copyProber: ProberRuntime = {
  id: 'demo.copy',
  layer: 'derived',
  domain: 'demo',
  prober: {
    evaluate: (facts: JsonValue, desired) => {
      const same = (facts as { same?: boolean }).same === true;
      return [
        {
          layer: 'derived',
          path: (desired.parameters['paths'] as Record<string, string>)['copy'],
          state: same ? 'current' : 'stale',
          detail: same ? 'equal' : 'the copy differs from the file',
        },
      ];
    },
  },
};

describe('drift with probers', () => {
  let root: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-drift-probes-'));
    git('init', '-q', '-b', 'main');
    await mkdir(join(root, 'hosts'));
    await mkdir(join(root, 'domains', 'demo'), { recursive: true });
    await writeFile(join(root, 'fleet.yaml'), MANIFEST);
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
    await writeFile(
      join(root, 'hosts', 'beta.yaml'),
      'node_id: beta\ncopy_path: "~/other/app.conf"\n',
    );
    await writeFile(join(root, 'domains/demo/app.conf'), 'id = {{ host.node_id }}\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'v1');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("asks each host once for its files and its probers, and appends the probers' items", async () => {
    const asked: string[] = [];
    const readSnapshot: ReadSnapshot = (host, targets, probes) => {
      asked.push(
        `${host}: ${targets.map((t) => t.path).join()} + ${probes.map((p) => p.prober).join()}`,
      );
      expect(probes[0]?.parameters).to.deep.equal({
        paths: {
          'app.conf': '~/.app.conf',
          copy: host === 'beta' ? '~/other/app.conf' : '~/.cache/app.conf',
        },
      });
      return Promise.resolve({
        files: new Map([
          [
            '~/.app.conf',
            {
              kind: 'present' as const,
              content: `id = ${host}\n`,
              sha256: 'a'.repeat(64),
              backups: [],
            },
          ],
        ]),
        probes:
          host === 'alpha'
            ? [{ prober: 'demo.copy', state: 'ok' as const, facts: { same: false } }]
            : [
                {
                  prober: 'demo.copy',
                  state: 'error' as const,
                  code: 'SYMLINK_REFUSED',
                  message: 'a link',
                },
              ],
      });
    };
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive: () => Promise.reject(new FleetError('INTERNAL', 'readLive must not be used')),
      probers: [copyProber],
      readSnapshot,
      now: () => new Date('2026-06-01T00:00:00Z'),
    });
    expect(asked.sort()).to.deep.equal([
      'alpha: ~/.app.conf + demo.copy',
      'beta: ~/.app.conf + demo.copy',
    ]);
    expect(
      report.hosts.map((h) => [h.host, h.status, h.items.map((i) => `${i.layer}:${i.state}`)]),
    ).to.deep.equal([
      ['alpha', 'drifted', ['file:current', 'derived:stale']],
      ['beta', 'error', ['file:current', 'derived:error']],
    ]);
    expect(report.hosts[0]?.items[1]).to.include({ domain: 'demo', path: '~/.cache/app.conf' });
    expect(report.hosts[1]?.items[1]?.detail).to.equal('demo.copy: SYMLINK_REFUSED: a link');
  });

  it("asks each host for its own supervisor's prober in the same request: a runtime item of no domain", async () => {
    const manifest = MANIFEST.replace(
      'supervisor: lab, domains: [demo] }\n  beta',
      'supervisor: systemd-user, domains: [demo] }\n  beta',
    );
    await writeFile(join(root, 'fleet.yaml'), manifest);
    git('commit', '-qam', 'alpha runs under systemd-user');
    const unitProber: ProberRuntime = {
      id: 'systemd-user.unit',
      layer: 'runtime',
      supervisor: 'systemd-user',
      prober: {
        evaluate: (facts: JsonValue) => [
          {
            layer: 'runtime',
            path: '~/.config/systemd/user/fleet-controller.service',
            state: (facts as { enabled?: boolean }).enabled ? 'current' : 'stale',
            detail: 'the unit is not enabled',
          },
        ],
      },
    };
    const asked: string[] = [];
    const readSnapshot: ReadSnapshot = (host, _targets, probes) => {
      asked.push(
        `${host}: ${probes.map((p) => `${p.prober}${p.domain ? `@${p.domain}` : ''}`).join()}`,
      );
      return Promise.resolve({
        files: new Map([
          [
            '~/.app.conf',
            {
              kind: 'present' as const,
              content: `id = ${host}\n`,
              sha256: 'a'.repeat(64),
              backups: [],
            },
          ],
        ]),
        probes: probes.map((p): ProbeAnswer => {
          const facts: JsonValue =
            p.prober === 'systemd-user.unit' ? { enabled: false } : { same: true };
          return { prober: p.prober, state: 'ok', facts };
        }),
      });
    };
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive: () => Promise.reject(new FleetError('INTERNAL', 'readLive must not be used')),
      probers: [copyProber, unitProber],
      readSnapshot,
      now: () => new Date('2026-06-01T00:00:00Z'),
    });
    expect(asked.sort()).to.deep.equal([
      'alpha: demo.copy@demo,systemd-user.unit',
      'beta: demo.copy@demo',
    ]);
    const alpha = report.hosts.find((h) => h.host === 'alpha');
    expect(alpha?.status).to.equal('drifted');
    const runtime = alpha?.items.find((i) => i.layer === 'runtime');
    expect(runtime).to.deep.equal({
      layer: 'runtime',
      path: '~/.config/systemd/user/fleet-controller.service',
      state: 'stale',
      detail: 'the unit is not enabled',
    });
  });

  it("carries the runtime journal summary in the host's one snapshot request; an older node's is read apart", async () => {
    const requests: string[] = [];
    const open = {
      journal: 'ok' as const,
      busy: false,
      attention: 'recovery-required' as const,
      transaction: {
        id: 'txn-1',
        kind: 'upgrade' as const,
        lastStep: 'activated',
        at: '2026-06-01T00:00:00.000Z',
        outcome: null,
      },
    };
    const readSnapshot: ReadSnapshot = (host, _targets, probes, options) => {
      requests.push(`${host}: snapshot${options?.runtime ? ' +runtime' : ''}`);
      return Promise.resolve({
        files: new Map([
          [
            '~/.app.conf',
            {
              kind: 'present' as const,
              content: `id = ${host}\n`,
              sha256: 'a'.repeat(64),
              backups: [],
            },
          ],
        ]),
        probes: probes.map((p): ProbeAnswer => ({ prober: p.prober, state: 'ok', facts: {} })),
        // alpha answers the summary in the snapshot; beta predates the field.
        ...(host === 'alpha' ? { runtime: open } : {}),
      });
    };
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive: () => Promise.reject(new FleetError('INTERNAL', 'readLive must not be used')),
      readSnapshot,
      readRuntimeSummary: (host) => {
        requests.push(`${host}: summary`);
        return Promise.resolve({ ...open, attention: 'none' as const, transaction: null });
      },
      now: () => new Date('2026-06-01T00:00:00Z'),
    });
    expect(requests.sort()).to.deep.equal([
      'alpha: snapshot +runtime',
      'beta: snapshot +runtime',
      'beta: summary',
    ]);
    const alpha = report.hosts.find((h) => h.host === 'alpha');
    expect(alpha?.status).to.equal('drifted');
    expect(alpha?.items.find((i) => i.layer === 'runtime')?.state).to.equal('stale');
    expect(report.hosts.find((h) => h.host === 'beta')?.status).to.equal('current');
  });

  it('--domain narrows drift to domains: no runtime summary is asked', async () => {
    const requests: string[] = [];
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive: (host) => {
        requests.push(`${host}: live`);
        return Promise.resolve(new Map());
      },
      readSnapshot: (host) => Promise.reject(new FleetError('INTERNAL', `${host}: no snapshot`)),
      readRuntimeSummary: (host) =>
        Promise.reject(new FleetError('INTERNAL', `${host}: no summary`)),
      domainFilter: ['demo'],
      now: () => new Date('2026-06-01T00:00:00Z'),
    });
    expect(requests.sort()).to.deep.equal(['alpha: live', 'beta: live']);
    expect(report.hosts.flatMap((h) => h.items).filter((i) => i.layer === 'runtime')).to.be.empty;
  });

  it('install parameters: the host variables the domain declares and derived paths; the reload is an action id, never an argv', async () => {
    const repo = await loadRepo(root);
    const parameters = installParameters(repo, 'beta', declaration);
    expect(parameters).to.deep.equal({
      node_id: 'beta',
      copy_path: '~/other/app.conf',
      'fleet.derived.copy': '~/other/app.conf',
    });
    expect(JSON.stringify(parameters)).to.not.contain('appctl');
    expect(installActions(repo, declaration)).to.deep.equal({ reload: 'app-reload' });
    expect(installActions(repo, { ...declaration, domain: 'other' })).to.deep.equal({});
    expect(probeParameters(declaration, { node_id: 'alpha' }, 'alpha')).to.deep.equal({
      paths: { 'app.conf': '~/.app.conf', copy: '~/.cache/app.conf' },
    });
  });

  it('fleet.yaml takes a reload as a node policy action id; an argv is refused, saying where it lives now', () => {
    const base = MANIFEST.replace(/ {2}demo: .*\n$/, '');
    for (const reload of [
      '[/usr/bin/systemctl, --user, reload, app]',
      '["/bin/sh", "-c", "id > /tmp/x"]',
      '"systemctl reload router && rm -rf ~"',
    ]) {
      let error: FleetError | undefined;
      try {
        parseManifest(`${base}  demo: { reload: ${reload} }\n`);
      } catch (caught) {
        error = caught as FleetError;
      }
      expect(error, reload).to.be.instanceOf(FleetError);
      expect(error?.problems[0]?.path, reload).to.equal('domains.demo.reload');
      expect(error?.problems[0]?.message, reload).to.match(
        /argv no longer goes in fleet\.yaml.*node-policy\.yaml.*actions\.<id>\.argv/,
      );
    }
    for (const bad of ['""', 'Reload', '"-x"']) {
      expect(() => parseManifest(`${base}  demo: { reload: ${bad} }\n`), bad).to.throw(FleetError);
    }
    expect(
      parseManifest(`${base}  demo: { reload: router-reload }\n`).domains['demo']?.reload,
    ).to.equal('router-reload');
  });
});
