/**
 * What the CLI's `bin/run.js` asks before it loads anything (docs/resident.md): whether a verb is one the
 * resident operator process runs, and whether this user's resident listens. The resident listens
 * on a Unix socket in a directory only this user can enter, named after the CLI it runs and the
 * Node.js that runs it, so a call never reaches a resident of another install or another Node.js.
 *
 * The caller checks the directory before every connection, not only the resident when it makes
 * it: a socket someone else placed would receive the caller's environment. This module is all a
 * call pays when no resident listens: it imports Node's own modules only.
 */
import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The verbs a resident runs (docs/resident.md): the operator's repeated reads and installs, none
 * of which reads stdin, prompts, or runs for long. Everything else runs in its own process.
 */
export const RESIDENT_VERBS: readonly (readonly string[])[] = [
  ['drift'],
  ['status'],
  ['validate'],
  ['apply'],
  ['config', 'install'],
  ['config', 'plan'],
  ['config', 'inventory'],
];

/** Whether `argv` names a verb a resident runs (with spaces, or oclif's `topic:verb`). */
export function residentVerb(argv: readonly string[]): boolean {
  const words = argv[0]?.includes(':') ? [...argv[0].split(':'), ...argv.slice(1)] : argv;
  return RESIDENT_VERBS.some((verb) => verb.every((word, index) => words[index] === word));
}

/**
 * What `FLEET_RESIDENT` asks of a call (docs/resident.md, ADR 0017): `manual` — the default, also
 * when unset or empty — runs a resident verb in this user's resident when one listens and never
 * starts one (contract §1.1: no daemon on the operator seat the operator did not start); `auto`,
 * the operator's opt-in, also starts one as the call ends when none listens; `off` runs every call
 * in its own process. Any other value is taken as `off`, with `problem` saying so: a typo never
 * starts a process the operator did not ask for.
 */
export type ResidentMode = 'auto' | 'manual' | 'off';

export function residentMode(value: string | undefined): {
  readonly mode: ResidentMode;
  readonly problem?: string;
} {
  if (value === undefined || value === '' || value === 'manual') return { mode: 'manual' };
  if (value === 'auto' || value === 'off') return { mode: value };
  return {
    mode: 'off',
    problem: `FLEET_RESIDENT is ${JSON.stringify(value)}, not auto, manual or off: taken as off`,
  };
}

/**
 * A CLI's root directory as a resident names it: the real path of `url` (the directory above its
 * `bin/run.js`). The CLI hands it in — this package never looks for the CLI — and every side must
 * name it the same way: the socket's name is made from it.
 */
export function cliRootAt(url: URL): string {
  return realpathSync(fileURLToPath(url));
}

export interface ResidentPlace {
  /** The private directory (0700, this user's). */
  readonly dir: string;
  /** The socket, in {@link ResidentPlace.dir}. */
  readonly socket: string;
}

export interface PlaceInputs {
  readonly env: NodeJS.ProcessEnv;
  readonly uid: number;
  /** The CLI's root directory, as its bin script names it. */
  readonly cliRoot: string;
  readonly nodeVersion: string;
  readonly execPath: string;
}

/**
 * FNV-1a, 64 bits, as 16 hex digits: tells installs apart in a name. Not a digest of anything
 * secret (the directory is what keeps others out), and `node:crypto` alone would cost a call that
 * finds no resident more than everything else here.
 */
export function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/**
 * The socket's place: `$XDG_RUNTIME_DIR/fleet` (the user's runtime directory, 0700 under a
 * systemd login), else `<tmpdir>/fleet-<uid>`. Pure: nothing is read or made.
 */
export function residentPlace(inputs: PlaceInputs): ResidentPlace {
  const runtime = inputs.env['XDG_RUNTIME_DIR'];
  const dir =
    runtime !== undefined && runtime.startsWith('/')
      ? join(runtime, 'fleet')
      : join(tmpdir(), `fleet-${inputs.uid}`);
  const identity = fnv1a64(`${inputs.cliRoot}\0${inputs.nodeVersion}\0${inputs.execPath}`);
  return { dir, socket: join(dir, `operator-${identity}.sock`) };
}

/**
 * Why `stats` (an lstat) is no private directory of `uid`, or `undefined` when it is one: a real
 * directory (not a link), owned by the user, that no group or other may enter.
 */
export function privateDirProblem(stats: Stats, uid: number): string | undefined {
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  if (!stats.isDirectory()) return 'is not a directory';
  if (stats.uid !== uid) return `belongs to uid ${stats.uid}, not ${uid}`;
  if ((stats.mode & 0o077) !== 0) return `has mode ${(stats.mode & 0o777).toString(8)}, not 700`;
  return undefined;
}

/** Why the socket at `stats` (an lstat) is not one this user made, or `undefined`. */
export function socketProblem(stats: Stats, uid: number): string | undefined {
  if (!stats.isSocket()) return 'is not a socket';
  if (stats.uid !== uid) return `belongs to uid ${stats.uid}, not ${uid}`;
  return undefined;
}

/**
 * Why `$XDG_RUNTIME_DIR` is not this user's own, or `undefined` (also when it is unset or relative:
 * the place is then under the temporary directory). `sudo -E` keeps the invoking user's: a `fleet/`
 * root made there would belong to root, and refuse that user's own resident afterwards.
 */
export function runtimeDirProblem(env: NodeJS.ProcessEnv, uid: number): string | undefined {
  const runtime = env['XDG_RUNTIME_DIR'];
  if (runtime === undefined || !runtime.startsWith('/')) return undefined;
  const stats = lstatSync(runtime, { throwIfNoEntry: false });
  if (stats === undefined) return `XDG_RUNTIME_DIR ${runtime} does not exist`;
  if (stats.uid !== uid)
    return `XDG_RUNTIME_DIR ${runtime} belongs to uid ${stats.uid}, not ${uid}`;
  return undefined;
}

/** The directory's problem, `missing` when it does not exist. */
export function checkPrivateDir(dir: string, uid: number): string | undefined {
  const stats = lstatSync(dir, { throwIfNoEntry: false });
  if (stats === undefined) return 'does not exist';
  return privateDirProblem(stats, uid);
}

/** Makes the directory (0700) when it is missing; its problem when what is there is not private. */
export function ensurePrivateDir(dir: string, uid: number): string | undefined {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    // Made meanwhile, by us or by someone else: the check below tells which.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return checkPrivateDir(dir, uid);
}

/**
 * Why a resident may not listen at `place`, in one line, or `undefined` when it may: its directory
 * is then made (0700) when missing. The runtime directory is checked first, before anything is
 * made: under `sudo -E`, root would make its directory inside the invoking user's, and own it there.
 * `fleet resident start`/`serve` refuse with this line; a call with `FLEET_RESIDENT=auto` starts none.
 */
export function listenProblem(
  place: ResidentPlace,
  env: NodeJS.ProcessEnv,
  uid: number,
): string | undefined {
  const runtime = runtimeDirProblem(env, uid);
  if (runtime !== undefined)
    return `${runtime}: a resident listens only in your own runtime directory (sudo -E keeps the invoking user's)`;
  const dir = ensurePrivateDir(place.dir, uid);
  return dir === undefined ? undefined : `${place.dir} ${dir}: it must be yours alone (mode 700)`;
}

/** The resident place of the CLI at `cliRoot`, for the user and the Node.js running this process. */
export function ownPlace(cliRoot: string): ResidentPlace {
  return residentPlace({
    env: process.env,
    uid: process.getuid?.() ?? -1,
    cliRoot,
    nodeVersion: process.version,
    execPath: process.execPath,
  });
}

/**
 * This user's resident place when a resident may listen there — a private directory holding this
 * user's socket for the CLI at `cliRoot` — else `undefined` (also when the directory cannot be
 * read at all).
 */
export function usablePlace(cliRoot: string): ResidentPlace | undefined {
  try {
    const place = ownPlace(cliRoot);
    const uid = process.getuid?.() ?? -1;
    const dir = lstatSync(place.dir, { throwIfNoEntry: false });
    if (dir === undefined || privateDirProblem(dir, uid) !== undefined) return undefined;
    const socket = lstatSync(place.socket, { throwIfNoEntry: false });
    return socket !== undefined && socketProblem(socket, uid) === undefined ? place : undefined;
  } catch {
    return undefined;
  }
}
