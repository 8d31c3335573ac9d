/**
 * Reads every published version of canonical files from the repository's history, in a fixed
 * number of git processes whatever the number of commits or files (contract §14): one `git log` to
 * list the commits that touched any of the files (renames followed, merged branches included),
 * one `git cat-file --batch` to read every blob. Identical contents are kept once, under their
 * newest commit.
 */
import { FleetError } from '../errors.js';
import type { CatFileEntry, CatFileSession, Git } from '../git.js';
import { parseTreeObject } from '../repo/at-commit.js';
import {
  SOURCE_BYTES,
  resolveLinkStep,
  sourceContent,
  type CanonicalSource,
} from '../repo/sources.js';

export interface CanonicalVersion {
  readonly commit: string;
  /** Committer date, ISO 8601. */
  readonly date: string;
  /** The version's text, or its bytes in base64 when `encoding` says so (`repo/sources.ts`). */
  readonly content: string;
  /** `base64`: this version is not UTF-8 text; `content` is its bytes in base64. */
  readonly encoding?: typeof SOURCE_BYTES;
}

/** Versions of one canonical file, newest first, each content once. */
export type CanonicalHistory = ReadonlyMap<string, readonly CanonicalVersion[]>;

/** A canonical file's content at the ref itself (`null`: it does not exist there). */
export type CanonicalAtRef = ReadonlyMap<string, string | null>;

const RECORD = '\x01';
const FIELD = '\x02';

export type { CatFileEntry };

/** Parses `git cat-file --batch` output for the requested specs, in order (`null`: missing). */
export function parseCatFileEntries(output: Buffer, count: number): (CatFileEntry | null)[] {
  const out: (CatFileEntry | null)[] = [];
  let offset = 0;
  for (let i = 0; i < count; i += 1) {
    const eol = output.indexOf(0x0a, offset);
    if (eol < 0) throw new Error('truncated git cat-file output');
    const header = output.subarray(offset, eol).toString('utf8');
    offset = eol + 1;
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      out.push(null);
      continue;
    }
    const [oid = '', type = '', size] = header.split(' ');
    const length = Number(size);
    if (!Number.isSafeInteger(length)) throw new Error(`unexpected git cat-file header: ${header}`);
    out.push({ oid, type, content: output.subarray(offset, offset + length) });
    offset += length + 1; // content, then a newline
  }
  return out;
}

/** The blob contents of `git cat-file --batch` output, in order (`null`: missing or not a blob). */
export function parseCatFileBatch(output: Buffer, count: number): (Buffer | null)[] {
  return parseCatFileEntries(output, count).map((entry) =>
    entry && entry.type === 'blob' ? entry.content : null,
  );
}

/** Canonical files as of one commit, with every published version of each. */
export interface CanonicalSnapshot {
  /** The commit the ref resolved to. */
  readonly commit: string;
  /** Each file's content at that commit (`null`: absent there). */
  readonly atRef: CanonicalAtRef;
  /** Each file's published versions (every commit reachable from the ref), newest first. */
  readonly history: CanonicalHistory;
  /**
   * What git records of each file at the ref beyond its text (`repo/sources.ts`): executable, the
   * target a symbolic link led to, or why it cannot be used (its text is then `null`). Absent
   * for a file that does not exist there, and in snapshots made by hand (tests, promote).
   */
  readonly sources?: ReadonlyMap<string, CanonicalSource>;
}

/** `git log` pathspecs that see a renamed file's earlier names: each path's top directory. */
function pathspecsOf(paths: readonly string[], directories: readonly string[]): string[] {
  const specs = new Set<string>();
  for (const path of paths) {
    const slash = path.indexOf('/');
    specs.add(slash < 0 ? path : `${path.slice(0, slash)}/`);
  }
  for (const dir of directories) specs.add(`${dir.replace(/\/+$/, '')}/`);
  return [...specs];
}

/** One file change of a `git log --name-status` record: the path after it, and before it. */
interface Change {
  readonly status: string;
  readonly path: string;
  /** For a rename: the path before it. */
  readonly from?: string;
}

function parseChanges(lines: readonly string[]): Change[] {
  const changes: Change[] = [];
  for (const line of lines) {
    if (line === '') continue;
    const [status = '', first = '', second] = line.split('\t');
    if (status.startsWith('R') && second !== undefined) {
      changes.push({ status: 'R', path: second, from: first });
    } else if (!status.startsWith('C')) {
      changes.push({ status: status.slice(0, 1), path: first });
    }
  }
  return changes;
}

/**
 * Every version of each of `paths` (repo-relative) in the history of `ref`, and each file at `ref`
 * itself. Two git processes in all, whatever the number of commits or files.
 *
 * "Published" is every commit reachable from `ref` (contract §8.2): a topic branch merged with
 * `--no-ff` counts like one fast-forwarded (`-m`: a merge's own resolution counts too). History
 * follows renames the way `git log --follow` does, for every file at once: the log covers each
 * path's top directory with rename detection, and is walked newest first (`--topo-order`: a rename
 * is always met before the older commits it renamed from), so a commit that renamed `old` to a
 * tracked name adds `old`'s earlier versions. A path deleted in a commit contributes no version
 * for that commit.
 */
export async function readCanonicalSnapshot(
  git: Git,
  paths: readonly string[],
  ref = 'HEAD',
  /**
   * Directories whose files' histories are read in the same two processes (`hosts`: every
   * `hosts/<host>.yaml` as it ever was). Their files appear in `history`, not in `atRef`.
   */
  directories: readonly string[] = [],
): Promise<CanonicalSnapshot> {
  const history = new Map<string, CanonicalVersion[]>(paths.map((path) => [path, []]));
  const log =
    paths.length === 0 && directories.length === 0
      ? ''
      : await readLog(git, ref, pathspecsOf(paths, directories));
  const specs = versionsListed(log, paths, directories, history);
  // One batch: the ref itself (for its commit id), each file at the ref, the tree of each file's
  // directory (its git mode: a link, an executable), then every version.
  const dirs = [...new Set(paths.map(dirOf))];
  const requests = [
    ref,
    ...paths.map((path) => `${ref}:${path}`),
    ...dirs.map((dir) => `${ref}:${dir}`),
    ...specs.map((s) => `${s.commit}:${s.name}`),
  ];
  const entries = parseCatFileEntries(
    await git.runBytes(['cat-file', '--batch'], { input: requests.map((r) => `${r}\n`).join('') }),
    requests.length,
  );
  const refEntry = entries[0];
  if (!refEntry || refEntry.type !== 'commit') {
    throw new FleetError('REPO_INVALID', `${ref} is not a commit in the fleet repository`);
  }
  const trees = new Map(dirs.map((dir, i) => [dir, entries[1 + paths.length + i] ?? null]));
  const atRef = new Map<string, string | null>();
  const sources = new Map<string, CanonicalSource>();
  const follow: string[] = [];
  paths.forEach((path, i) => {
    const entry = entries[1 + i];
    const at = sourceAt(path, entry ?? null, trees.get(dirOf(path)) ?? null, refEntry.oid);
    atRef.set(path, at.text);
    if (at.source !== undefined) sources.set(path, at.source);
    if (at.follow) follow.push(path);
  });
  addVersions(history, specs, entries, 1 + paths.length + dirs.length);
  const snapshot = { commit: refEntry.oid, atRef, history, sources };
  return follow.length === 0 ? snapshot : followLinks(git, snapshot, follow);
}

/** Every commit reachable from `ref` that touched a pathspec, newest first, with its changes. */
async function readLog(git: Git, ref: string, pathspecs: readonly string[]): Promise<string> {
  const { stdout } = await git.run([
    '-c',
    'core.quotePath=false',
    'log',
    '-m',
    '-M',
    '--topo-order',
    `--format=${RECORD}%H${FIELD}%cI`,
    '--name-status',
    ref,
    '--',
    ...pathspecs,
  ]);
  return stdout;
}

/** One version to read: the tracked `path` as it was named (`name`) in `commit`. */
interface VersionSpec {
  readonly path: string;
  readonly name: string;
  readonly commit: string;
  readonly date: string;
}

/**
 * The versions the log lists, renames followed back; each file met under `directories` gets its
 * own (empty) entry in `history`.
 */
function versionsListed(
  log: string,
  paths: readonly string[],
  directories: readonly string[],
  history: Map<string, CanonicalVersion[]>,
): VersionSpec[] {
  // Every earlier name of each tracked path (itself first), grown as renames are met.
  const names = new Map<string, string>(paths.map((path) => [path, path]));
  const prefixes = directories.map((dir) => `${dir.replace(/\/+$/, '')}/`);
  const trackedAs = (name: string): string | undefined => {
    const tracked = names.get(name);
    if (tracked !== undefined) return tracked;
    if (!prefixes.some((prefix) => name.startsWith(prefix))) return undefined;
    if (!history.has(name)) history.set(name, []);
    return name;
  };
  const specs: VersionSpec[] = [];
  const listed = new Set<string>();
  for (const record of log.split(RECORD).slice(1)) {
    const [head = '', ...lines] = record.split('\n');
    const [commit = '', date = ''] = head.split(FIELD);
    for (const change of parseChanges(lines)) {
      const tracked = trackedAs(change.path);
      if (tracked === undefined) continue;
      if (change.from !== undefined && !names.has(change.from)) names.set(change.from, tracked);
      if (change.status === 'D') continue;
      // `-m` lists a merge once per parent: one blob read per commit and name.
      const key = `${commit}:${change.path}`;
      if (listed.has(key)) continue;
      listed.add(key);
      specs.push({ path: tracked, name: change.path, commit, date });
    }
  }
  return specs;
}

/** Each version read (`entries` from `first` on, in `specs` order) into `history`, each content once. */
function addVersions(
  history: Map<string, CanonicalVersion[]>,
  specs: readonly VersionSpec[],
  entries: readonly (CatFileEntry | null)[],
  first: number,
): void {
  const seen = new Map<string, Set<string>>();
  specs.forEach((spec, i) => {
    const entry = entries[first + i];
    if (!entry || entry.type !== 'blob') return; // deleted in this commit
    const { content, binary } = sourceContent(entry.content, spec.name);
    const key = binary === undefined ? `text:${content}` : `${SOURCE_BYTES}:${content}`;
    let contents = seen.get(spec.path);
    if (!contents) seen.set(spec.path, (contents = new Set()));
    if (contents.has(key)) return;
    contents.add(key);
    history.get(spec.path)?.push({
      commit: spec.commit,
      date: spec.date,
      content,
      ...(binary === undefined ? {} : { encoding: SOURCE_BYTES }),
    });
  });
}

/** A path's directory in the repository (`''`: the root, whose tree `<ref>:` names). */
function dirOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/** The mode git records for `name` in a raw tree object (`null`: no such entry). */
function modeIn(tree: CatFileEntry | null, name: string, commit: string): string | null {
  if (tree === null || tree.type !== 'tree') return null;
  const entry = parseTreeObject(tree.content, commit.length / 2).find((e) => e.name === name);
  return entry?.mode ?? null;
}

/**
 * One source at the ref: its text and what git records of it, or `follow` when a link may be on
 * its way — it is one (120000), or a directory above it is not a tree at the ref (a symbolic link
 * to a directory, or nothing: `followLinks` tells which).
 */
function sourceAt(
  path: string,
  entry: CatFileEntry | null,
  tree: CatFileEntry | null,
  commit: string,
): { text: string | null; source?: CanonicalSource; follow?: true } {
  if (entry === null || entry.type !== 'blob') {
    return tree === null || tree.type !== 'tree' ? { text: null, follow: true } : { text: null };
  }
  const mode = modeIn(tree, path.slice(path.lastIndexOf('/') + 1), commit);
  if (mode === '120000') return { text: null, follow: true };
  const { content, binary } = sourceContent(entry.content, path);
  const executable = mode === '100755';
  return { text: content, source: binary === undefined ? { executable } : { executable, binary } };
}

/**
 * The snapshot with each symbolic link on a source's way followed within the repository
 * (`repo/sources.ts`) — the source's own link or a directory's above it
 * (`dotfiles/config -> common/config`): the source's text, history and mode are its target's,
 * read at the same commit (one `git cat-file` for the hops, then the targets' own snapshot); a
 * link that leaves the repository or loops is refused with the source's path. Only a snapshot
 * that has a link (or a missing source) pays for this.
 */
async function followLinks(
  git: Git,
  snapshot: CanonicalSnapshot & { readonly sources: Map<string, CanonicalSource> },
  follow: readonly string[],
): Promise<CanonicalSnapshot> {
  const { commit } = snapshot;
  const atRef = new Map(snapshot.atRef);
  const history = new Map(snapshot.history);
  const sources = new Map(snapshot.sources);
  const targets = new Map<string, string>();
  const session = git.catFile();
  try {
    for (const source of follow) {
      try {
        const target = await resolveAtCommit(session, commit, source);
        // No link on its way: the source is missing, as the first read said.
        if (target !== source) targets.set(source, target);
      } catch (error) {
        if (!(error instanceof FleetError)) throw error;
        sources.set(source, { problem: error.message });
      }
    }
  } finally {
    session.close();
  }
  if (targets.size === 0) return { commit, atRef, history, sources };
  // The targets have no link on their way: reading them follows nothing further.
  const read = await readCanonicalSnapshot(git, [...new Set(targets.values())], commit);
  for (const [source, target] of targets) {
    atRef.set(source, read.atRef.get(target) ?? null);
    history.set(source, read.history.get(target) ?? []);
    const found = read.sources?.get(target);
    if (found !== undefined && 'problem' in found) sources.set(source, found);
    else if (found !== undefined) sources.set(source, { ...found, target });
  }
  return { commit, atRef, history, sources };
}

/**
 * The path `source` leads to at `commit` once every symbolic link on its way is followed — its
 * own, or a directory's above it — within the repository, hop by hop (each hop one read of the
 * path's directories and entries); `source` itself when no link is on its way. Throws
 * `RENDER_FAILED` naming `source` for a link out of the repository, a loop or too many hops.
 */
async function resolveAtCommit(
  session: CatFileSession,
  commit: string,
  source: string,
): Promise<string> {
  const seen = new Set<string>();
  let path = source;
  for (let hop = 0; ; hop += 1) {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    const read = await session.read(
      prefixes.flatMap((prefix) => [`${commit}:${dirOf(prefix)}`, `${commit}:${prefix}`]),
    );
    let link = -1;
    for (let i = 0; i < prefixes.length && link < 0; i += 1) {
      const entry = read[2 * i + 1] ?? null;
      if (entry === null) return path; // nothing there: no link further on
      if (modeIn(read[2 * i] ?? null, parts[i] as string, commit) === '120000') link = i;
    }
    if (link < 0) return path;
    const text = (read[2 * link + 1] as CatFileEntry).content.toString('utf8');
    const resolved = resolveLinkStep(source, prefixes[link] as string, text, seen, hop);
    path = [resolved, ...parts.slice(link + 1)].join('/');
  }
}

/** The published versions only (see {@link readCanonicalSnapshot}). */
export async function readCanonicalHistory(
  git: Git,
  paths: readonly string[],
  ref = 'HEAD',
): Promise<CanonicalHistory> {
  return (await readCanonicalSnapshot(git, paths, ref)).history;
}
