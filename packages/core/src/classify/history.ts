/**
 * Reads every published version of canonical files from the repository's main line, in a fixed
 * number of git processes whatever the number of commits or files (SPEC §14): one `git log` to
 * list the commits that touched any of the files, one `git cat-file --batch` to read every blob.
 * Identical contents are kept once, under their newest commit.
 */
import type { Git } from '../git.js';

export interface CanonicalVersion {
  readonly commit: string;
  /** Committer date, ISO 8601. */
  readonly date: string;
  readonly content: string;
}

/** Versions of one canonical file, newest first, each content once. */
export type CanonicalHistory = ReadonlyMap<string, readonly CanonicalVersion[]>;

const RECORD = '\x01';
const FIELD = '\x02';

/** Parses `git cat-file --batch` output for the requested specs, in order. */
export function parseCatFileBatch(output: Buffer, count: number): (Buffer | null)[] {
  const out: (Buffer | null)[] = [];
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
    const [, type, size] = header.split(' ');
    const length = Number(size);
    if (!Number.isSafeInteger(length)) throw new Error(`unexpected git cat-file header: ${header}`);
    out.push(type === 'blob' ? output.subarray(offset, offset + length) : null);
    offset += length + 1; // content, then a newline
  }
  return out;
}

/**
 * Every version of each of `paths` (repo-relative) on the first-parent history of `ref`.
 * A path deleted in a commit contributes no version for that commit.
 */
export async function readCanonicalHistory(
  git: Git,
  paths: readonly string[],
  ref = 'HEAD',
): Promise<CanonicalHistory> {
  const history = new Map<string, CanonicalVersion[]>(paths.map((path) => [path, []]));
  if (paths.length === 0) return history;
  const log = await git.run([
    '-c',
    'core.quotePath=false',
    'log',
    '--first-parent',
    '--no-renames',
    `--format=${RECORD}%H${FIELD}%cI`,
    '--name-only',
    ref,
    '--',
    ...paths,
  ]);
  const wanted = new Set(paths);
  const specs: { path: string; commit: string; date: string }[] = [];
  for (const record of log.stdout.split(RECORD).slice(1)) {
    const [head = '', ...names] = record.split('\n');
    const [commit = '', date = ''] = head.split(FIELD);
    for (const name of names) if (wanted.has(name)) specs.push({ path: name, commit, date });
  }
  if (specs.length === 0) return history;
  const blobs = parseCatFileBatch(
    await git.runBytes(['cat-file', '--batch'], {
      input: specs.map((spec) => `${spec.commit}:${spec.path}\n`).join(''),
    }),
    specs.length,
  );
  const seen = new Map<string, Set<string>>(paths.map((path) => [path, new Set()]));
  specs.forEach((spec, index) => {
    const blob = blobs[index];
    if (!blob) return; // deleted in this commit
    const content = blob.toString('utf8');
    const contents = seen.get(spec.path) as Set<string>;
    if (contents.has(content)) return;
    contents.add(content);
    history.get(spec.path)?.push({ commit: spec.commit, date: spec.date, content });
  });
  return history;
}
