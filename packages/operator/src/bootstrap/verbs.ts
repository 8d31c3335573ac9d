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

/**
 * The line a failing receiver writes to stderr before its human error (issue 35 item 3): the
 * node's error as `fleet-error: {"code","message"}`, so the operator keeps the node's code (and
 * its exit code, contract §7) instead of guessing it from the human lines, which name none.
 */
export const RECEIVER_ERROR_PREFIX = 'fleet-error: ';
