/**
 * Ctrl-C while a node works on a runtime transaction (upgrade, bootstrap apply, rollback): the
 * node goes on without the operator — the transaction is the node's, journaled there (contract
 * §12) — so the CLI does not pretend to cancel it. It says how to follow it and exits 130 (128 +
 * SIGINT, what a shell reports for an interrupted command).
 */
export const INTERRUPTED_EXIT = 130;

/** The stderr line for an interrupted runtime verb on `host`. */
export function interruptedLine(host: string): string {
  return `interrupted: ${host}'s controller goes on with the transaction on its own; follow it with \`fleet bootstrap status ${host}\``;
}

/**
 * Runs `work` with a SIGINT handler that writes {@link interruptedLine} to stderr and exits 130;
 * the handler is removed when `work` settles.
 */
export async function followableOnInterrupt<T>(host: string, work: () => Promise<T>): Promise<T> {
  const onInterrupt = (): void => {
    process.stderr.write(`\n${interruptedLine(host)}\n`);
    process.exit(INTERRUPTED_EXIT);
  };
  process.once('SIGINT', onInterrupt);
  try {
    return await work();
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}
