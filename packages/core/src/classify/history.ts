/**
 * Reads every published version of canonical files from the repository's history, in a fixed
 * number of git processes whatever the number of commits or files (contract §14): one `git log` to
 * list the commits that touched any of the files (renames followed, merged branches included),
 * one `git cat-file --batch` to read every blob. Identical contents are kept once, under their
 * newest commit.
 */
import { FleetError } from '../errors.js';
import type { CatFileEntry, Git } from '../git.js';

export interface CanonicalVersion {
  readonly commit: string;
  /** Committer date, ISO 8601. */
  readonly date: string;
  readonly content: string;
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
      : (
          await git.run([
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
            ...pathspecsOf(paths, directories),
          ])
        ).stdout;
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
  const specs: { path: string; name: string; commit: string; date: string }[] = [];
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
  // One batch: the ref itself (for its commit id), each file at the ref, then every version.
  const requests = [
    ref,
    ...paths.map((path) => `${ref}:${path}`),
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
  const atRef = new Map<string, string | null>();
  paths.forEach((path, i) => {
    const entry = entries[1 + i];
    atRef.set(path, entry && entry.type === 'blob' ? entry.content.toString('utf8') : null);
  });
  const seen = new Map<string, Set<string>>();
  specs.forEach((spec, i) => {
    const entry = entries[1 + paths.length + i];
    if (!entry || entry.type !== 'blob') return; // deleted in this commit
    const content = entry.content.toString('utf8');
    let contents = seen.get(spec.path);
    if (!contents) seen.set(spec.path, (contents = new Set()));
    if (contents.has(content)) return;
    contents.add(content);
    history.get(spec.path)?.push({ commit: spec.commit, date: spec.date, content });
  });
  return { commit: refEntry.oid, atRef, history };
}

/** The published versions only (see {@link readCanonicalSnapshot}). */
export async function readCanonicalHistory(
  git: Git,
  paths: readonly string[],
  ref = 'HEAD',
): Promise<CanonicalHistory> {
  return (await readCanonicalSnapshot(git, paths, ref)).history;
}
