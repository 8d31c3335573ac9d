/**
 * What every supervisor adapter's prober (layer `runtime`) checks the same way, whatever the
 * supervisor (docs/runtime-lifecycle.md): the `current` generation pointer, and whether the
 * supervised controller runs that generation with the desired `--node-id`. Each prober adds its
 * supervisor's own checks (enabled, running, a pending reload, lingering).
 */
import type { Platform } from '../interfaces/node-context.js';
import { readCurrentPointer, runtimeLayout } from './layout.js';

/** The `current` pointer as a prober reports it. */
export interface PointerFacts {
  /** The build id `current` names, or `null` (see `currentState`). */
  readonly current: string | null;
  /** `set`, `unset`, or `invalid: <why>`. */
  readonly currentState: string;
}

/** Reads the node's `current` pointer under `home` (never throws for a damaged pointer). */
export async function readPointerFacts(home: string, platform: Platform): Promise<PointerFacts> {
  const pointer = await readCurrentPointer(runtimeLayout(home, platform));
  return {
    current: pointer.state === 'set' ? pointer.buildId : null,
    currentState: pointer.state === 'invalid' ? `invalid: ${pointer.detail}` : pointer.state,
  };
}

/** A build id as reports show it: its first 12 characters, or `(none)`. */
export const shortBuildId = (id: string | null): string =>
  id === null ? '(none)' : id.slice(0, 12);

/**
 * The disagreements between what the supervised controller runs and what it should (pure): the
 * pointer not set, a generation other than `current`, a `--node-id` other than `expectedNodeId`
 * (a development build — no pointer and no generation — is not drift).
 */
export function runtimeDisagreements(
  facts: PointerFacts & {
    readonly generation: string | null;
    readonly nodeIdFlag: string | null;
  },
  expectedNodeId: string,
): string[] {
  const problems: string[] = [];
  // No `current` and a controller run from no generation: a development build (a lab's
  // checkout), nothing to compare. Either one alone is drift.
  const development = facts.currentState === 'absent' && facts.generation === null;
  if (facts.currentState !== 'set' && !development)
    problems.push(`the current generation pointer is ${facts.currentState}`);
  else if (facts.generation !== facts.current) {
    problems.push(
      `it runs generation ${shortBuildId(facts.generation)}, current is ${shortBuildId(facts.current)}`,
    );
  }
  if (facts.nodeIdFlag !== expectedNodeId) {
    problems.push(
      `it runs with --node-id ${facts.nodeIdFlag ?? '(none)'}, expected ${expectedNodeId}`,
    );
  }
  return problems;
}
