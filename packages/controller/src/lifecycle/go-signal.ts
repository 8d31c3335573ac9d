/**
 * The runtime runner's go (contract §12; spawn.ts): a runner changes nothing before it, so a
 * restart of the controller never cuts off the answer that started the transaction. The go is
 * `runner-<txn>.go`, written by the controller once its answer has been flushed, or the end of the
 * process that started the runner (the recovery receiver's end is the end of the SSH session).
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive } from '../process-alive.js';

export interface GoSignal {
  /** Written by the controller once its answer is flushed. */
  readonly goFile?: string;
  /** The process that started the runner: its end is a go too (the receiver, a dead controller). */
  readonly waitPid?: number;
  /** A go after this long regardless (default 30 s). */
  readonly timeoutMs?: number;
}

/**
 * Waits for the runner's go: the go file, or the end of the process that started it — the
 * controller answered first, or the recovery receiver (and with it the SSH session) has ended.
 */
export async function waitForGo(signal: GoSignal): Promise<'go' | 'starter-ended' | 'timeout'> {
  const until = Date.now() + (signal.timeoutMs ?? 30_000);
  for (;;) {
    if (signal.goFile !== undefined && existsSync(signal.goFile)) return 'go';
    if (signal.waitPid !== undefined && !processAlive(signal.waitPid)) return 'starter-ended';
    if (Date.now() > until) return 'timeout';
    await sleep(50);
  }
}
