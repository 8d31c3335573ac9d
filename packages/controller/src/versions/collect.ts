/**
 * The node half of `fleet version` (`POST /v1/versions`), read-only: resolve each named tool on
 * the controller's PATH and run its `--version`; list every `fleet` executable along PATH, in
 * order, with whether it runs and the version it reports; on macOS, read fleet's launchd agents
 * with `launchctl print`. Every command runs through the node's process runner: by absolute path,
 * never through a shell, with a minimal environment (the node's PATH, HOME, LANG) and a bounded
 * timeout. The node only observes; the operator decides what is missing, stale or shadowing.
 */
import { constants } from 'node:fs';
import { access, lstat, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
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

/** Each `--version` (and `launchctl print`) is killed after this long. */
export const VERSION_TIMEOUT_MS = 5_000;

/** The PATH's directories in order: empty and relative entries skipped, duplicates once. */
export function pathDirectories(path: string, platform: Platform): string[] {
  const delimiter = platform === 'win32' ? ';' : ':';
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of path.split(delimiter)) {
    if (entry === '' || !isAbsolute(entry) || seen.has(entry)) continue;
    seen.add(entry);
    out.push(entry);
  }
  return out;
}

/** File names a command may have in one directory (`.exe`, `.cmd`… on Windows). */
function candidates(name: string, platform: Platform): string[] {
  if (platform !== 'win32') return [name];
  return [name, ...['.exe', '.cmd', '.bat', '.com'].map((ext) => `${name}${ext}`)];
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const stats = await stat(path);
    if (!stats.isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable file named `name` along `dirs` (what a shell would run), or `null`. */
export async function resolveOnPath(
  name: string,
  dirs: readonly string[],
  platform: Platform,
): Promise<string | null> {
  for (const dir of dirs) {
    for (const file of candidates(name, platform)) {
      const path = join(dir, file);
      if (await isExecutableFile(path)) return path;
    }
  }
  return null;
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

export async function collectTools(
  tools: readonly string[],
  input: CollectInput,
): Promise<VersionsTool[]> {
  const dirs = pathDirectories(input.path, input.platform);
  return Promise.all(
    [...new Set(tools)].map(async (name): Promise<VersionsTool> => {
      const found = await resolveOnPath(name, dirs, input.platform);
      if (found === null) return { name, state: 'missing' };
      const ran = await runVersion(input.processes, found, input.path, input.timeoutMs);
      return ran.ok
        ? { name, state: 'found', path: found, version: ran.text }
        : { name, state: 'failed', path: found, detail: ran.text };
    }),
  );
}

/** Every `fleet` along PATH, in order: dead ones (broken link, not executable, failing) too. */
export async function collectFleetOnPath(input: CollectInput): Promise<FleetOnPath[]> {
  const dirs = pathDirectories(input.path, input.platform);
  const found: string[] = [];
  for (const dir of dirs) {
    for (const file of candidates('fleet', input.platform)) {
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
    found.slice(0, MAX_FLEET_ON_PATH).map(async (path): Promise<FleetOnPath> => {
      let stats;
      try {
        stats = await stat(path);
      } catch {
        return { path, runnable: false, version: null, detail: 'broken symbolic link' };
      }
      if (!stats.isFile()) return { path, runnable: false, version: null, detail: 'not a file' };
      if (!(await isExecutableFile(path))) {
        return { path, runnable: false, version: null, detail: 'not executable' };
      }
      const ran = await runVersion(input.processes, path, input.path, input.timeoutMs);
      return ran.ok
        ? { path, runnable: true, version: versionIn(ran.text), detail: ran.text }
        : { path, runnable: false, version: null, detail: ran.text };
    }),
  );
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
