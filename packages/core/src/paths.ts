/**
 * Node paths are written `~/`-relative (`~/.config/router/router.yaml`): `~` is the node's home,
 * the controller's `--home`. This module decides, before any filesystem call, whether such a path
 * is acceptable on every platform fleet manages (reliability catalogue, "Path syntax"): the same
 * rules on Linux and Windows, so a path valid in the repo is valid on every host.
 */
import { FleetError } from './errors.js';
import { foldPath } from './policy/fold.js';

const MAX_PATH_BYTES = 1024;
const MAX_COMPONENT_BYTES = 255;
// Windows device names are reserved with any extension (`nul.txt`), in any case, the superscript
// digits ¹²³ (written as escapes) included.
const WINDOWS_RESERVED =
  /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\..*)?$/i;
// C0/C1 controls and DEL, and the Unicode bidi controls and zero-width characters that make a name
// display differently from what it is.
const CONTROL_OR_BIDI =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

/**
 * An NTFS 8.3 short name (`CONFIG~1`, `CREDEN~1.JSO`): a second name Windows gives a long one, so
 * `~/CONFIG~1/fleet/node-policy.yaml` may be `~/.config/fleet/node-policy.yaml`. No check can know
 * which long name one stands for, so a node or repo path holding one is refused on every platform.
 */
export function isShortNameForm(component: string): boolean {
  return /^[^.]*~[0-9]+(\.[^.]*)?$/.test(component);
}

function invalid(path: string, why: string): FleetError {
  // JSON.stringify escapes C0 controls only: DEL, C1 (0x9b is a terminal CSI), bidi and zero-width
  // characters would reach the terminal raw, so they are escaped too (catalogue 37, 38).
  const shown = JSON.stringify(path).replace(
    /[\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu,
    (ch) => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
  return new FleetError('PATH_INVALID', `path ${shown} is not allowed: ${why}`);
}

/**
 * Splits a `~/`-relative path into its components, refusing anything that could escape the home or
 * means different things on different platforms. Throws `PATH_INVALID`.
 */
export function parseHomePath(path: string): readonly string[] {
  if (typeof path !== 'string' || path.length === 0) throw invalid(String(path), 'empty');
  if (CONTROL_OR_BIDI.test(path)) throw invalid(path, 'control, NUL or bidi character');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw invalid(path, 'too long');
  if (path.includes('\\')) throw invalid(path, 'backslash (a separator on Windows)');
  if (!path.startsWith('~/')) throw invalid(path, 'must start with ~/ (the node home)');
  const components = path.slice(2).split('/');
  for (const component of components) {
    if (component === '') throw invalid(path, 'empty component (// or trailing /)');
    if (component === '.' || component === '..') throw invalid(path, `"${component}" component`);
    if (Buffer.byteLength(component) > MAX_COMPONENT_BYTES) {
      throw invalid(path, 'component too long');
    }
    if (component.includes(':')) throw invalid(path, 'colon (drive or stream on Windows)');
    if (/[<>"|?*]/.test(component)) throw invalid(path, 'character reserved on Windows');
    if (/[. ]$/.test(component)) throw invalid(path, 'trailing dot or space');
    if (WINDOWS_RESERVED.test(component)) throw invalid(path, 'reserved device name on Windows');
    if (isShortNameForm(component)) {
      throw invalid(path, `${component} component (an 8.3 short name: it may alias any long name)`);
    }
  }
  return components;
}

/** True when `path` is acceptable to {@link parseHomePath}. */
export function isHomePath(path: string): boolean {
  try {
    parseHomePath(path);
    return true;
  } catch {
    return false;
  }
}

/** A node path given on the command line, as the verb will send it. */
export interface NodePathArgument {
  /** The `~/`-relative path. */
  readonly path: string;
  /** True when the shell had expanded `~` under the operator's home and it was mapped back. */
  readonly mappedFromHome: boolean;
}

/**
 * The one parser of node-path arguments (`config adopt`, `config export`, `install --file`): a
 * `~/…` path as is; a path under the operator's `$HOME` — what an unquoted `~/…` becomes in the
 * shell — mapped back to `~/…`; anything else one `PATH_INVALID` (exit 2) saying to quote it.
 * The result passes {@link parseHomePath}.
 */
export function parseNodePathArgument(
  raw: string,
  operatorHome: string | undefined,
): NodePathArgument {
  const home = operatorHome?.replace(/\/+$/, '');
  if (!raw.startsWith('~/') && home !== undefined && home.startsWith('/') && home !== '') {
    if (raw.startsWith(`${home}/`)) {
      const path = `~/${raw.slice(home.length + 1)}`;
      parseHomePath(path);
      return { path, mappedFromHome: true };
    }
  }
  if (!raw.startsWith('~/')) {
    throw new FleetError(
      'PATH_INVALID',
      `${JSON.stringify(raw)} is not a node path: node paths are ~/-relative (the node's home); quote it so the shell leaves the ~ alone: '~/…'`,
    );
  }
  parseHomePath(raw);
  return { path: raw, mappedFromHome: false };
}

/** Repo-relative paths (`domains/router/router.yaml`) follow the same rules without the `~/`. */
export function parseRepoPath(path: string): readonly string[] {
  if (path.startsWith('/') || path.startsWith('~')) {
    throw invalid(path, 'must be relative to the repository');
  }
  const components = parseHomePath(`~/${path}`);
  // Names git itself treats specially (its own directory, in any case and as the NTFS short name
  // `git~1`, and files that configure it): a repo path fleet writes must never be one of them.
  const special = components.find((component) =>
    ['.git', 'git~1', '.gitmodules', '.gitattributes'].includes(component.toLowerCase()),
  );
  if (special !== undefined) throw invalid(path, `${special} component`);
  return components;
}

/**
 * The key under which two `~/` paths name the same file on some platform fleet manages: full
 * Unicode case folding and NFKC ({@link foldPath}: macOS stores names decomposed, and macOS and
 * Windows file systems ignore case by default). A path valid in the repo is valid on
 * every host (this module's rule), so two entries that collide on one are refused on all.
 */
export function homePathKey(path: string): string {
  return foldPath(path);
}

/**
 * How two `~/` paths overlap on some host: `same` (one file, after {@link homePathKey}),
 * `parent` (`a` is a directory above `b`), `child` (`b` is above `a`), or `null`. Two managed
 * files where one is the other's parent can never both exist (chezmoi refuses such a source state
 * before writing anything): the install of one would have to replace a directory by a file.
 */
export function homePathOverlap(a: string, b: string): 'same' | 'parent' | 'child' | null {
  const x = homePathKey(a);
  const y = homePathKey(b);
  if (x === y) return 'same';
  if (y.startsWith(`${x}/`)) return 'parent';
  if (x.startsWith(`${y}/`)) return 'child';
  return null;
}
