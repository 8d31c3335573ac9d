/** Builders for runtime-generation tests: expectations, live identities, journal lines. */
import type { IdentityResponse } from '@fleet/core';
import type { RuntimeExpectation } from '../../src/generations/acceptance.js';
import {
  encodeRecord,
  type JournalStep,
  type StepData,
} from '../../src/generations/journal-record.js';

export const BUILD_A = 'a'.repeat(64);
export const BUILD_B = 'b'.repeat(64);
export const BUILD_C = 'c'.repeat(64);

export function expectation(
  buildId: string,
  overrides: Partial<RuntimeExpectation> = {},
): RuntimeExpectation {
  return {
    nodeId: 'node-01',
    package: '@fleet/cli',
    version: '1.2.0',
    build: { sha256: buildId, commit: `commit-${buildId.slice(0, 4)}` },
    protocol: { min: 1, max: 1 },
    catalog: {
      domains: ['router'],
      probers: ['router.volume'],
      bootstrapAdapters: ['systemd-user'],
    },
    ...overrides,
  };
}

/** The identity a runtime meeting `expected` exactly would report. */
export function identityFor(
  expected: RuntimeExpectation,
  overrides: Partial<IdentityResponse> = {},
): IdentityResponse {
  const plugin = { plugin: '@fleet/plugin-x', version: '0.1.0', implemented: true };
  return {
    nodeId: expected.nodeId,
    nodeIdFlag: expected.nodeId,
    package: expected.package,
    version: expected.version ?? '0.0.0',
    build: { sha256: expected.build.sha256, commit: expected.build.commit },
    protocol: expected.protocol.min,
    catalog: {
      domains: expected.catalog.domains.map((domain) => ({
        domain,
        coupling: 'none' as const,
        ...plugin,
      })),
      probers: expected.catalog.probers.map((id) => ({
        id,
        layer: 'runtime' as const,
        domain: null,
        ...plugin,
      })),
      bootstrapAdapters: expected.catalog.bootstrapAdapters.map((supervisor) => ({
        supervisor,
        platforms: ['linux' as const],
        ...plugin,
      })),
    },
    pid: 4242,
    startedAt: '2026-01-01T00:00:00.000Z',
    health: { status: 'ok', checks: [{ name: 'audit-log', status: 'ok', detail: 'head seq 1' }] },
    ...overrides,
  };
}

/** Builds journal text step by step (sequence numbers and checksums filled in). */
export class JournalText {
  private seq = 0;
  readonly lines: string[] = [];

  constructor(readonly txn = '01JTXN0000000000000000000A') {}

  add<S extends JournalStep>(step: S, data: StepData<S>, txn = this.txn): this {
    this.seq += 1;
    this.lines.push(
      encodeRecord({ v: 1, seq: this.seq, at: '2026-01-01T00:00:00.000Z', txn, step, data }),
    );
    return this;
  }

  /** Skips a sequence number (a removed record). */
  gap(): this {
    this.seq += 1;
    return this;
  }

  text(): string {
    return this.lines.map((line) => `${line}\n`).join('');
  }

  /** A full upgrade from `prior` to `target`, up to and including `until`. */
  static upgrade(
    target: string,
    prior: string | null,
    until: JournalStep,
    kind: 'upgrade' | 'rollback' = 'upgrade',
  ): JournalText {
    const j = new JournalText();
    const steps: [JournalStep, unknown][] = [
      [
        'begin',
        {
          kind,
          supervisor: 'systemd-user',
          target: expectation(target),
          prior: prior ? expectation(prior) : null,
        },
      ],
      ...(kind === 'upgrade'
        ? [
            ['staged', { buildId: target, treeHash: 'f'.repeat(64), reused: false }] as [
              JournalStep,
              unknown,
            ],
          ]
        : []),
      ['activated', { buildId: target, previous: prior }],
      ['supervisor-restarted', { supervisor: 'systemd-user', pid: 4242 }],
      ['accepted', { buildId: target }],
      ['end', { outcome: 'accepted' }],
    ];
    for (const [step, data] of steps) {
      j.add(step, data as never);
      if (step === until) break;
    }
    return j;
  }
}
