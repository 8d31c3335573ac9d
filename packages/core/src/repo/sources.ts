/**
 * A canonical source is the bytes git holds with their mode, read the same way from a commit (drift,
 * plan, install: `classify/history.ts`) and from the working tree (`fleet validate`), so the two
 * agree (issue 38):
 *
 * - a symbolic link (git mode 120000) is followed within the repository, as chezmoi follows a
 *   source symlink (`testdata/scripts/issue1161.txtar`) and as a checkout of the repository
 *   would: the source is the file it names. So is a link to a directory on the source's way
 *   (`dotfiles/config -> common/config`, source `dotfiles/config/x`), as a checkout resolves it. A link that leaves the repository (an absolute
 *   target, or `..` above its root), a chain longer than {@link MAX_LINK_HOPS} or a loop is
 *   refused with the link's path — its target is never read from outside;
 * - an executable source (100755) is reported, so a files entry without a `mode` installs it
 *   executable (contract §10.4);
 * - a source that is not UTF-8 text — one holding NUL bytes (binary) or bytes that are not UTF-8
 *   (Latin-1 `caf\xe9`) — is bytes: installed byte for byte as a whole file and compared by
 *   bytes, never rendered and never re-encoded (decoding it leniently would write U+FFFD where the
 *   repository has other bytes), as Ansible's `copy` and chezmoi copy a file. Its content travels
 *   as base64 (`encoding: 'base64'`, contract §10.4); a block entry's source, which is spliced as
 *   text, must be UTF-8 and is refused with the offset of the first byte that is not.
 *
 * The pure parts are here; the commit reader is `classify/history.ts`.
 */
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join, posix } from 'node:path';
import { FleetError } from '../errors.js';
import { parseRepoPath } from '../paths.js';

/** Links followed at most from one source, as Linux's own bound for a path's symlinks (40). */
export const MAX_LINK_HOPS = 40;

/** What a commit or the working tree says of a canonical source beyond its text. */
export type CanonicalSource =
  | {
      /** Git's mode 100755 (the working tree's owner execute bit). */
      readonly executable: boolean;
      /** The repository path of the file a symbolic link led to (absent: not a link). */
      readonly target?: string;
      /**
       * Why the source is not UTF-8 text (`holds binary content (a NUL byte at offset 4)`): its
       * content is then its bytes in base64 ({@link SOURCE_BYTES}), installed byte for byte and
       * never rendered. Absent for a UTF-8 source.
       */
      readonly binary?: string;
    }
  | {
      /** Why the source cannot be used (its path is in the message). */
      readonly problem: string;
    };

/**
 * The repository path a symbolic link at `linkPath` names with `target` (its text), or why it
 * is refused: a target that is absolute or climbs above the repository's root is outside it.
 */
export function resolveRepoLink(
  linkPath: string,
  target: string,
): { readonly path: string } | { readonly problem: string } {
  const shown = `${linkPath} is a symbolic link to ${JSON.stringify(target)}`;
  if (target === '' || target.includes('\0')) return { problem: `${shown}: not a path` };
  if (posix.isAbsolute(target) || /^[A-Za-z]:[\\/]/.test(target) || target.includes('\\')) {
    return { problem: `${shown}, outside the repository: fleet follows links within it only` };
  }
  const joined = posix.normalize(posix.join(posix.dirname(linkPath), target));
  if (joined === '..' || joined.startsWith('../') || joined === '.' || joined === '') {
    return { problem: `${shown}, outside the repository: fleet follows links within it only` };
  }
  return { path: joined };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The offset of the first byte that makes `bytes` not UTF-8 (RFC 3629: no overlongs, no surrogates). */
function firstInvalidByte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0;
    if (length === 0 || i + length > bytes.length) return i;
    const second = bytes[i + 1] as number;
    if (length >= 2) {
      const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
      const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
      if (second < low || second > high) return i;
      for (let k = 2; k < length; k += 1) {
        const next = bytes[i + k] as number;
        if (next < 0x80 || next > 0xbf) return i;
      }
    }
    i += length;
  }
  return i;
}

/** How a source that is not UTF-8 text travels as a string (in a snapshot, a plan, the wire). */
export const SOURCE_BYTES = 'base64';

/**
 * A source's text, or its bytes with why they are not text: NUL bytes (a binary file, or UTF-16)
 * or bytes that are not UTF-8 (Latin-1 `caf\xe9`). A UTF-8 byte order mark is kept, as every
 * other byte.
 */
export function decodeSource(
  bytes: Uint8Array,
  path: string,
): { readonly text: string } | { readonly bytes: Uint8Array; readonly binary: string } {
  const nul = bytes.indexOf(0);
  if (nul >= 0)
    return { bytes, binary: `${path} holds binary content (a NUL byte at offset ${nul})` };
  try {
    return { text: UTF8.decode(bytes) };
  } catch {
    return {
      bytes,
      binary: `${path} is not valid UTF-8 (the first invalid byte is at offset ${firstInvalidByte(bytes)})`,
    };
  }
}

/** A source's content as a snapshot holds it: its text, or its bytes in base64 when not text. */
export function sourceContent(
  bytes: Uint8Array,
  path: string,
): { readonly content: string; readonly binary?: string } {
  const decoded = decodeSource(bytes, path);
  if ('text' in decoded) return { content: decoded.text };
  return { content: Buffer.from(decoded.bytes).toString(SOURCE_BYTES), binary: decoded.binary };
}

/** The `RENDER_FAILED` error of a source that cannot be used, naming it. */
export function sourceRefused(path: string, problem: string): FleetError {
  return new FleetError('RENDER_FAILED', problem, { problems: [{ file: path, message: problem }] });
}

/**
 * A canonical source read from the working tree (`fleet validate`), by the rules a commit is
 * read with: its text and what git would record of it. Every symbolic link on its way — its own,
 * or a directory's above it (`dotfiles/config -> common/config`) — is followed within the
 * repository, as at a commit (`classify/history.ts`). Throws `CANONICAL_MISSING` when it does not
 * exist, `RENDER_FAILED` naming the path when it cannot be used.
 */
export function readWorkingSource(
  root: string,
  repoPath: string,
): {
  /** The source's text, or its bytes in base64 when `source.binary` says it is not text. */
  readonly text: string;
  readonly source: CanonicalSource;
} {
  const path = resolveWorkingPath(root, repoPath);
  const absolute = join(root, ...parseRepoPath(path));
  const stat = lstatOrNull(absolute);
  if (stat === null) {
    throw new FleetError('CANONICAL_MISSING', `${repoPath} is missing`, {
      problems: [{ file: repoPath, message: 'canonical file is missing' }],
    });
  }
  const read = sourceContent(
    readFileSync(absolute),
    path === repoPath ? path : `${repoPath} (→ ${path})`,
  );
  const executable = (stat.mode & 0o100) !== 0;
  return {
    text: read.content,
    source: {
      executable,
      ...(path === repoPath ? {} : { target: path }),
      ...(read.binary === undefined ? {} : { binary: read.binary }),
    },
  };
}

/**
 * The repository path `repoPath` leads to in the working tree: every symbolic link on its way —
 * its own, or a directory's above it — followed within the repository, as at a commit. The path
 * itself need not exist. Throws `RENDER_FAILED` naming `repoPath` for a link out of the
 * repository, a loop, or a chain past {@link MAX_LINK_HOPS}.
 */
export function resolveWorkingPath(root: string, repoPath: string): string {
  let path = repoPath;
  const seen = new Set<string>();
  for (let hop = 0; ; hop += 1) {
    const at = linkOnWay(root, path);
    if (at === null) return path;
    const target = readlinkSync(join(root, ...parseRepoPath(at)), 'utf8');
    const resolved = resolveLinkStep(repoPath, at, target, seen, hop);
    const rest = path.slice(at.length + 1);
    path = rest === '' ? resolved : `${resolved}/${rest}`;
  }
}

/**
 * The first component of `repoPath` that is a symbolic link in the working tree (`a/b` of
 * `a/b/c`), or `null`: a write there would follow the link, or replace it with a file.
 */
export function linkOnWay(root: string, repoPath: string): string | null {
  const components = parseRepoPath(repoPath);
  const link = components.findIndex((_, i) =>
    lstatOrNull(join(root, ...components.slice(0, i + 1)))?.isSymbolicLink(),
  );
  return link < 0 ? null : components.slice(0, link + 1).join('/');
}

/**
 * One hop of a link chain: where the link at `path` leads, or the refusal (outside the
 * repository, a loop, too many hops), named after the source the chain started at.
 */
export function resolveLinkStep(
  source: string,
  path: string,
  target: string,
  seen: Set<string>,
  hop: number,
): string {
  seen.add(path);
  const resolved = resolveRepoLink(path, target);
  if ('problem' in resolved) {
    throw sourceRefused(
      source,
      path === source ? resolved.problem : `${source}: ${resolved.problem}`,
    );
  }
  if (seen.has(resolved.path)) {
    throw sourceRefused(source, `${source}: the symbolic links from it loop (at ${resolved.path})`);
  }
  if (hop + 1 >= MAX_LINK_HOPS) {
    throw sourceRefused(source, `${source}: more than ${MAX_LINK_HOPS} symbolic links in a row`);
  }
  return resolved.path;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}
