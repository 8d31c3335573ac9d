/**
 * The node half of `fleet version` (`POST /v1/versions`), read-only: list every executable of each
 * named tool and of `fleet` along the PATH (the policy's, else the user's login PATH —
 * login-path.ts), in order, each inspected without running it (executable.ts: a broken link, a
 * lost interpreter) and the ones that can start asked `--version`; on macOS, read fleet's launchd
 * agents with `launchctl print`. Every command runs through the node's process runner: by absolute path,
 * never through a shell, with a minimal environment (the node's PATH, HOME, LANG) and a bounded
 * timeout. The node only observes; the operator decides what is missing, stale or shadowing.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { join, posix, win32 } from 'node:path';
import {
  FLEET_LAUNCHD_LABELS,
  LEGACY_LAUNCHD_LABEL,
  MAX_FLEET_ON_PATH,
  MAX_VERSION_TEXT,
  type FleetOnPath,
  type LaunchdAgent,
  type Platform,
  type ProcessRunner,
  type VersionsTool,
} from '@fleet/core/node';
import { candidates, inspectExecutable, type Inspection } from './executable.js';

export { resolveOnPath } from './executable.js';

/** Each `--version` (and `launchctl print`) is killed after this long. */
export const VERSION_TIMEOUT_MS = 5_000;

/** The PATH's directories in order: empty and relative entries skipped, duplicates once. */
export function pathDirectories(path: string, platform: Platform): string[] {
  const delimiter = platform === 'win32' ? ';' : ':';
  // The platform's own rule (`C:\bin` is absolute on Windows, not on a POSIX system).
  const absolute = (entry: string) =>
    platform === 'win32' ? win32.isAbsolute(entry) : posix.isAbsolute(entry);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of path.split(delimiter)) {
    if (entry === '' || !absolute(entry) || seen.has(entry)) continue;
    seen.add(entry);
    out.push(entry);
  }
  return out;
}

/** The first non-empty line of a command's output, cut to the wire's bound. */
export function firstLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  return line.trim().slice(0, MAX_VERSION_TEXT);
}

/** The first semantic version in a `--version` line (`@fleet/cli/1.2.0 linux-x64 …` → 1.2.0). */
export function versionIn(text: string): string | null {
  const match = /(?:^|[^0-9A-Za-z.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(text);
  return match?.[1] ?? null;
}

interface Ran {
  readonly ok: boolean;
  /** The output line when ok; why not otherwise. */
  readonly text: string;
}

async function runVersion(
  processes: ProcessRunner,
  executable: string,
  path: string,
  timeoutMs: number,
): Promise<Ran> {
  let result;
  try {
    result = await processes.run({
      command: executable,
      args: ['--version'],
      extraEnv: { PATH: path },
      timeoutMs,
    });
  } catch (error) {
    return {
      ok: false,
      text: `could not run: ${(error as Error).message}`.slice(0, MAX_VERSION_TEXT),
    };
  }
  if (result.timedOut) return { ok: false, text: `--version timed out after ${timeoutMs} ms` };
  const line = firstLine(result.stdout) || firstLine(result.stderr);
  if (result.exitCode !== 0) {
    const why = result.exitCode === -1 ? 'could not run' : `--version exited ${result.exitCode}`;
    return { ok: false, text: `${why}${line ? `: ${line}` : ''}`.slice(0, MAX_VERSION_TEXT) };
  }
  if (line === '') return { ok: false, text: '--version printed nothing' };
  return { ok: true, text: line };
}

/** `detail`, cut to the wire's bound. */
const bounded = (detail: string): string => detail.slice(0, MAX_VERSION_TEXT);

/** One executable along PATH as reported, and what a shell does when its search reaches it. */
interface Listed {
  readonly entry: FleetOnPath;
  readonly kind: Inspection['kind'];
}

/**
 * Every executable named `name` along the PATH, in order, dead ones too (a broken link, not
 * executable, its interpreter gone): each inspected without running it, and the ones that can
 * start asked `--version`.
 */
async function listOnPath(name: string, input: CollectInput): Promise<Listed[]> {
  const dirs = pathDirectories(input.path, input.platform);
  const found: string[] = [];
  for (const dir of dirs) {
    for (const file of candidates(name, input.platform)) {
      const path = join(dir, file);
      try {
        await lstat(path);
        found.push(path);
      } catch {
        // not in this directory
      }
    }
  }
  return Promise.all(
    found.slice(0, MAX_FLEET_ON_PATH).map(async (path): Promise<Listed> => {
      const inspection = await inspectExecutable(path, dirs, input.platform);
      if (inspection.kind !== 'runs') {
        const detail = bounded(inspection.detail);
        return { entry: { path, runnable: false, version: null, detail }, kind: inspection.kind };
      }
      const ran = await runVersion(input.processes, path, input.path, input.timeoutMs);
      const entry: FleetOnPath = ran.ok
        ? { path, runnable: true, version: versionIn(ran.text), detail: ran.text }
        : { path, runnable: false, version: null, detail: ran.text };
      return { entry, kind: 'runs' };
    }),
  );
}

/**
 * One tool as a shell would run it: the first entry along PATH its command search takes (one
 * that is an executable file once links are followed). `missing` when there is none — or when
 * that one cannot start because its interpreter is gone: a later healthy install is never
 * reached, so the tool is not current. Every entry is reported in `onPath`.
 */
export async function collectTool(name: string, input: CollectInput): Promise<VersionsTool> {
  const listed = await listOnPath(name, input);
  const onPath = listed.map((l) => l.entry);
  const runs = listed.find((l) => l.kind !== 'skipped');
  if (runs === undefined) {
    if (onPath.length === 0) return { name, state: 'missing', onPath };
    const dead = onPath.map((e) => `${e.path} is ${e.detail}`).join('; ');
    return { name, state: 'missing', detail: bounded(`none on PATH can run: ${dead}`), onPath };
  }
  const { path, detail } = runs.entry;
  if (runs.kind === 'dead') {
    return {
      name,
      state: 'missing',
      path,
      detail: bounded(`${path} runs first and ${detail}`),
      onPath,
    };
  }
  return runs.entry.runnable
    ? { name, state: 'found', path, version: detail, onPath }
    : { name, state: 'failed', path, detail, onPath };
}

export async function collectTools(
  tools: readonly string[],
  input: CollectInput,
): Promise<VersionsTool[]> {
  return Promise.all([...new Set(tools)].map((name) => collectTool(name, input)));
}

/** Every `fleet` along PATH: dead ones (broken link, not executable, failing) too. */
export async function collectFleetOnPath(input: CollectInput): Promise<FleetOnPath[]> {
  return (await listOnPath('fleet', input)).map((l) => l.entry);
}

/** What `launchctl print gui/<uid>/<label>` says about a loaded service (top-level keys only). */
export interface LaunchctlPrint {
  readonly state: string | null;
  readonly pid: number | null;
  readonly lastExitStatus: number | null;
}

/**
 * Parses `launchctl print` output. Only the service's own keys count (one level inside its
 * `{ … }`): nested dictionaries (endpoints, event triggers) have `state` lines of their own.
 * `last exit code = (never exited)` is `null`; `78: EX_CONFIG` is 78.
 */
export function parseLaunchctlPrint(text: string): LaunchctlPrint {
  let depth = 0;
  let state: string | null = null;
  let pid: number | null = null;
  let lastExitStatus: number | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (line === '}') {
      depth -= 1;
      continue;
    }
    const match = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (depth === 1 && match) {
      const key = match[1] as string;
      const value = (match[2] as string).trim();
      if (key === 'state' && !value.endsWith('{')) state = value;
      else if (key === 'pid' && /^\d+$/.test(value)) pid = Number(value);
      else if (key === 'last exit code') {
        const code = /^(-?\d+)/.exec(value);
        lastExitStatus = code ? Number(code[1]) : null;
      }
    }
    if (line.endsWith('{')) depth += 1;
  }
  return { state, pid, lastExitStatus };
}

/** The labels to read: fleet's, and any plist of an earlier label scheme the user still has. */
async function launchdLabels(home: string): Promise<string[]> {
  const names = await readdir(join(home, 'Library', 'LaunchAgents')).catch(() => [] as string[]);
  const legacy = names
    .filter((name) => name.endsWith('.plist'))
    .map((name) => name.slice(0, -'.plist'.length))
    .filter((label) => LEGACY_LAUNCHD_LABEL.test(label))
    .sort();
  return [...FLEET_LAUNCHD_LABELS, ...legacy];
}

/**
 * fleet's launchd agents in the user's gui domain, read-only (darwin). `launchctl` is looked up on
 * the PATH the collector hands on (`/bin` on a Mac), as every supervisor tool is.
 */
export async function collectLaunchd(
  input: CollectInput,
  uid: number,
  given?: readonly string[],
): Promise<LaunchdAgent[]> {
  const labels = given ?? (await launchdLabels(input.home));
  return Promise.all(
    labels.map(async (label): Promise<LaunchdAgent> => {
      const present = await stat(join(input.home, 'Library', 'LaunchAgents', `${label}.plist`))
        .then((s) => s.isFile())
        .catch(() => false);
      const result = await input.processes
        .run({
          command: 'launchctl',
          args: ['print', `gui/${uid}/${label}`],
          extraEnv: { PATH: input.path },
          timeoutMs: input.timeoutMs,
        })
        .catch(() => undefined);
      if (!result || result.timedOut || result.exitCode !== 0) {
        return { label, present, loaded: false, state: null, pid: null, lastExitStatus: null };
      }
      return { label, present, loaded: true, ...parseLaunchctlPrint(result.stdout) };
    }),
  );
}

export interface CollectInput {
  readonly home: string;
  readonly platform: Platform;
  /** The PATH searched and handed to every command. */
  readonly path: string;
  readonly processes: ProcessRunner;
  readonly timeoutMs: number;
}
