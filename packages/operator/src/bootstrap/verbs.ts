/**
 * The verbs of the SSH recovery path (contract §12, `bootstrap apply --recover`). The operator side
 * sends one as the SSH command string; the node's forced command (`fleet bootstrap receive`)
 * reads it from `SSH_ORIGINAL_COMMAND` as data and accepts exactly these strings, nothing else.
 */
export const RECOVERY_VERBS = ['version', 'status', 'apply'] as const;
export type RecoveryVerb = (typeof RECOVERY_VERBS)[number];

/** Exact string comparison against the allowlist (no parsing, no prefix, no case folding). */
export function isRecoveryVerb(value: string): value is RecoveryVerb {
  return (RECOVERY_VERBS as readonly string[]).includes(value);
}
