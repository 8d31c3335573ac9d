/**
 * Finding and stopping the lab's own processes, and only those. A pid in lab.json or
 * supervisor.json may have been recycled by the time `lab down` runs, so before any signal the
 * process's command line (Linux: /proc/<pid>/cmdline) must still name this lab — the supervisor's
 * `lab supervise --dir DIR`, a controller's `controller serve --home DIR/nodes/<host>/home`.
 * A recycled pid is never signalled.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export type LabRole = 'supervisor' | 'controller';

/** A process the lab started, as recorded, with what its command line must say. */
export interface LabProcess {
  readonly pid: number;
  readonly role: LabRole;
  readonly host: string | null;
  /** supervisor: the lab's real DIR; controller: the node's home. */
  readonly path: string;
}

export type StopOutcome = 'terminated' | 'killed' | 'not-running' | 'not-ours' | 'survived';

/** The process's argv, or `undefined` when it does not exist (or is a zombie: argv is empty). */
export function commandLine(pid: number): string[] | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (process.platform === 'linux') {
    try {
      const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (raw === '') return undefined;
      return raw.replace(/\0$/, '').split('\0');
    } catch {
      return undefined;
    }
  }
  // Elsewhere, ps: the arguments come back joined by spaces, matched as text below.
  try {
    const out = execFileSync('ps', ['-ww', '-o', 'command=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return out === '' ? undefined : [out];
  } catch {
    return undefined;
  }
}

function hasSequence(args: readonly string[], sequence: readonly string[]): boolean {
  // One string (ps off Linux): the sequence as whole words, so that `--dir /srv/lab` is not found
  // in `--dir /srv/lab2` — a recycled pid running another lab's process must not be signalled.
  if (args.length === 1) return ` ${args[0] as string} `.includes(` ${sequence.join(' ')} `);
  for (let i = 0; i + sequence.length <= args.length; i += 1) {
    if (sequence.every((part, j) => args[i + j] === part)) return true;
  }
  return false;
}

/** Whether `args` is this lab's supervisor (for `dir`) or the controller of `home`. */
export function isLabCommand(args: readonly string[], role: LabRole, path: string): boolean {
  return role === 'supervisor'
    ? hasSequence(args, ['lab', 'supervise']) && hasSequence(args, ['--dir', path])
    : hasSequence(args, ['controller', 'serve']) && hasSequence(args, ['--home', path]);
}

/** Alive and still the process the lab started. */
export function isOurs(process_: LabProcess): boolean {
  const args = commandLine(process_.pid);
  return args !== undefined && isLabCommand(args, process_.role, process_.path);
}

function exists(pid: number): boolean {
  return commandLine(pid) !== undefined;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone between the check and the signal: nothing to stop.
  }
}

async function waitGone(items: readonly LabProcess[], boundMs: number): Promise<void> {
  const until = Date.now() + boundMs;
  while (Date.now() < until && items.some(isOurs)) await sleep(50);
}

/**
 * Stops `items`: supervisors first (each stops its controller cleanly), then whatever is left
 * gets SIGTERM, and after `graceMs` SIGKILL. Each outcome says what happened to that pid; a pid
 * that is alive but no longer this lab's is `not-ours` and was never signalled.
 */
export async function stopLabProcesses(
  items: readonly LabProcess[],
  options: { graceMs?: number } = {},
): Promise<Map<LabProcess, StopOutcome>> {
  const graceMs = options.graceMs ?? 5_000;
  const outcomes = new Map<LabProcess, StopOutcome>();
  const ours = items.filter((item) => {
    if (isOurs(item)) return true;
    outcomes.set(item, exists(item.pid) ? 'not-ours' : 'not-running');
    return false;
  });
  const supervisors = ours.filter((item) => item.role === 'supervisor');
  for (const item of supervisors) signal(item.pid, 'SIGTERM');
  await waitGone(ours, supervisors.length > 0 ? graceMs : 0);
  const left = ours.filter(isOurs);
  for (const item of left) signal(item.pid, 'SIGTERM');
  await waitGone(left, graceMs);
  const stubborn = left.filter(isOurs);
  for (const item of stubborn) signal(item.pid, 'SIGKILL');
  await waitGone(stubborn, 2_000);
  for (const item of ours) {
    if (isOurs(item)) outcomes.set(item, 'survived');
    else outcomes.set(item, stubborn.includes(item) ? 'killed' : 'terminated');
  }
  return outcomes;
}
