/**
 * The process plumbing of the root-run harnesses (systemd-user.ts, netns-host.ts and their
 * siblings): running a program and collecting its output, optionally inside a network and a mount
 * namespace (`nsenter`), and looking processes up in /proc, signalling them and waiting for them
 * without an event loop (the exit handlers clean up synchronously). Apart so that the user
 * manager's and the network hosts' modules share one copy, and none of them imports another for it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface UserRun {
  /** -1 when a signal ended it (then `signal` names it). */
  readonly exitCode: number;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export function runAs(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<UserRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd ?? '/',
      env: options.env ?? { PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? -1, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** `/run/netns/<name>` for a name, the path itself for a path. */
export function netnsPath(netns: string): string {
  return netns.includes('/') ? netns : `/run/netns/${netns}`;
}

/** The namespaces a manager and its user's commands are in (`null`: the machine's own). */
export interface Namespaces {
  readonly net: string | null;
  readonly mount: string | null;
}

/**
 * The argv prefix that runs a command inside `ns` (nothing for the machine's own). Entering a
 * mount namespace moves the working directory to its root: `cwd` is set again inside.
 */
export function inNamespaces(ns: Namespaces, cwd = '/'): string[] {
  if (ns.net === null && ns.mount === null) return [];
  return [
    'nsenter',
    ...(ns.net === null ? [] : [`--net=${ns.net}`]),
    ...(ns.mount === null ? [] : [`--mount=${ns.mount}`, `--wd=${cwd}`]),
    '--',
  ];
}

/** `runAs` of `command ARGS` inside `ns`. */
export function runIn(
  ns: Namespaces,
  command: string,
  args: readonly string[],
  options: Parameters<typeof runAs>[2] = {},
): Promise<UserRun> {
  const prefix = inNamespaces(ns, options.cwd);
  return prefix.length === 0
    ? runAs(command, args, options)
    : runAs(prefix[0] as string, [...prefix.slice(1), command, ...args], options);
}

export function envArgs(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).map(([key, value]) => `${key}=${value}`);
}

export function must(command: string, args: readonly string[]): string {
  return execFileSync(command, [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Alive and not a zombie. */
export function alive(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return false;
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** Every live process of `uid` (by /proc's real uid). */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const status = readText(`/proc/${name}/status`);
    const real = /^Uid:\s+(\d+)/m.exec(status ?? '')?.[1];
    if (real !== undefined && Number(real) === uid && alive(Number(name))) pids.push(Number(name));
  }
  return pids;
}

export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** Blocking sleep for the exit handler, where nothing asynchronous runs. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether a child has ended (by exit or signal). */
export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}
