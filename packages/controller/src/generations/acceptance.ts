/**
 * Acceptance of a started runtime (contract §12, catalogue 51): pure. The runtime must report the
 * exact node id (and run with it as its `--node-id`), the exact package and build identity (the
 * artifact's sha256 and its source commit), a compatible protocol, every expected catalog entry,
 * and health `ok`. A copied artifact, a successful restart or a matching version alone never
 * accepts: every criterion is checked, and every failed one is listed.
 */
import {
  pluginMismatches,
  runtimeExpectationSchema,
  type IdentityResponse,
  type RuntimeExpectation,
} from '@fleet/core/node';

// The expectation is a wire shape (core's wire/runtime.ts): the operator sends it.
export { runtimeExpectationSchema, type RuntimeExpectation };

export type AcceptanceCriterion =
  | 'reachable'
  | 'node-id'
  | 'node-id-flag'
  | 'package'
  | 'version'
  | 'build-sha256'
  | 'build-commit'
  | 'protocol'
  | 'catalog'
  | 'health';

export interface AcceptanceFailure {
  readonly criterion: AcceptanceCriterion;
  readonly expected: string;
  readonly actual: string;
}

export interface Acceptance {
  readonly accepted: boolean;
  readonly failures: readonly AcceptanceFailure[];
}

const shown = (value: string | number | null | undefined): string =>
  value === null || value === undefined ? '(none)' : String(value);

/** Checks a live identity (`GET /v1/identity`, or `null` when none answered) against `expected`. */
export function acceptRuntime(
  expected: RuntimeExpectation,
  identity: IdentityResponse | null,
): Acceptance {
  if (identity === null) {
    return {
      accepted: false,
      failures: [
        {
          criterion: 'reachable',
          expected: 'a runtime answering /v1/identity',
          actual: 'no answer',
        },
      ],
    };
  }
  const failures: AcceptanceFailure[] = [];
  const check = (criterion: AcceptanceCriterion, want: string | null, got: string | null): void => {
    if (want !== got) failures.push({ criterion, expected: shown(want), actual: shown(got) });
  };
  check('node-id', expected.nodeId, identity.nodeId);
  check('node-id-flag', expected.nodeId, identity.nodeIdFlag);
  check('package', expected.package, identity.package);
  if (expected.version !== null) check('version', expected.version, identity.version);
  check('build-sha256', expected.build.sha256, identity.build.sha256);
  check('build-commit', expected.build.commit, identity.build.commit);
  if (identity.protocol < expected.protocol.min || identity.protocol > expected.protocol.max) {
    failures.push({
      criterion: 'protocol',
      expected: `${expected.protocol.min}..${expected.protocol.max}`,
      actual: String(identity.protocol),
    });
  }
  const missing = [
    ...expected.catalog.domains
      .filter((d) => !identity.catalog.domains.some((entry) => entry.domain === d))
      .map((d) => `domain ${d}`),
    ...expected.catalog.probers
      .filter((p) => !identity.catalog.probers.some((entry) => entry.id === p))
      .map((p) => `prober ${p}`),
    ...expected.catalog.bootstrapAdapters
      .filter((s) => !identity.catalog.bootstrapAdapters.some((entry) => entry.supervisor === s))
      .map((s) => `bootstrap adapter ${s}`),
    // contract §10.5: the plugins fleet.yaml names, loaded from the new generation as pinned
    ...pluginMismatches(expected.catalog.plugins ?? [], identity.catalog.plugins ?? []).map(
      ({ expected: pin }) =>
        `plugin ${pin.name} ${pin.version} (sha256 ${pin.sha256.slice(0, 12)})`,
    ),
  ];
  if (missing.length > 0) {
    failures.push({
      criterion: 'catalog',
      expected: 'every expected entry',
      actual: `missing ${missing.join(', ')}`,
    });
  }
  if (identity.health.status !== 'ok') {
    const failing = identity.health.checks.filter((c) => c.status !== 'ok').map((c) => c.name);
    failures.push({
      criterion: 'health',
      expected: 'ok',
      actual: `${identity.health.status}${failing.length ? ` (${failing.join(', ')})` : ''}`,
    });
  }
  return { accepted: failures.length === 0, failures };
}

/** One line per failed criterion, for messages and the journal. */
export function describeFailures(failures: readonly AcceptanceFailure[]): string[] {
  return failures.map((f) => `${f.criterion}: expected ${f.expected}, got ${f.actual}`);
}
