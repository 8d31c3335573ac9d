/**
 * One source of truth for the verbs that compare or write (docs/classification.md): drift, plan,
 * install and reconcile read fleet.yaml, hosts/ and domains/ from the same commit — HEAD, resolved
 * once — and name it. What the working tree has not committed is not used, and said: an
 * uncommitted template edit is never silently "current, nothing to install". `fleet validate`
 * checks the working tree instead (what is about to be committed), and says so.
 */
import { FleetError } from '../errors.js';
import type { Git } from '../git.js';
import { parseCatFileEntries } from '../classify/history.js';
import { DOMAINS_DIR, HOSTS_DIR, MANIFEST_FILE, repoFromTexts, type FleetRepo } from './load.js';

/** Where a verb read the repository. */
export interface RepoSource {
  /** The commit HEAD resolved to. */
  readonly commit: string;
  /** Paths under fleet.yaml, hosts/ and domains/ changed, staged or untracked: not used. */
  readonly uncommitted: readonly string[];
}

/** The paths `git status --porcelain=v1 -z` lists (a rename's both sides). */
export function parsePorcelainPaths(output: string): string[] {
  const paths: string[] = [];
  const fields = output.split('\0');
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i] as string;
    if (field.length < 4) continue;
    paths.push(field.slice(3));
    // A rename or copy is followed by the path it came from.
    if (field[0] === 'R' || field[0] === 'C') paths.push(fields[(i += 1)] ?? '');
  }
  return [...new Set(paths.filter(Boolean))].sort();
}

/**
 * fleet.yaml and hosts/ as committed at HEAD, validated like the working tree's
 * ({@link repoFromTexts}), and the uncommitted paths of fleet.yaml, hosts/ and domains/. Four git
 * processes, whatever the number of hosts.
 */
export async function loadRepoAtHead(
  root: string,
  git: Git,
): Promise<{ readonly repo: FleetRepo; readonly source: RepoSource }> {
  const head = await git.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
    allowFailure: true,
  });
  if (head.exitCode !== 0 || head.stdout.trim() === '') {
    throw new FleetError(
      'REPO_INVALID',
      `the fleet repository at ${root} has no commit yet: commit fleet.yaml, hosts/ and domains/ first (drift, plan and install read the last commit)`,
    );
  }
  const commit = head.stdout.trim();
  const [tree, status] = await Promise.all([
    git.run([
      '-c',
      'core.quotePath=false',
      'ls-tree',
      '-z',
      commit,
      '--',
      MANIFEST_FILE,
      `${HOSTS_DIR}/`,
    ]),
    git.run([
      '-c',
      'core.quotePath=false',
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--',
      MANIFEST_FILE,
      HOSTS_DIR,
      DOMAINS_DIR,
    ]),
  ]);
  const entries = tree.stdout
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [, type = '', oid = ''] = line.slice(0, tab).split(' ');
      return { type, oid, path: line.slice(tab + 1) };
    });
  const manifest = entries.find((entry) => entry.path === MANIFEST_FILE && entry.type === 'blob');
  if (manifest === undefined) {
    throw new FleetError(
      'REPO_NOT_FOUND',
      `no ${MANIFEST_FILE} in commit ${commit.slice(0, 12)} of ${root}: commit it first`,
    );
  }
  const hosts = entries
    .filter((entry) => entry.path.startsWith(`${HOSTS_DIR}/`))
    .map((entry) => ({ ...entry, name: entry.path.slice(HOSTS_DIR.length + 1) }))
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const wanted = [manifest, ...hosts.filter((h) => h.type === 'blob' && h.name.endsWith('.yaml'))];
  const blobs = parseCatFileEntries(
    await git.runBytes(['cat-file', '--batch'], {
      input: wanted.map((entry) => `${entry.oid}\n`).join(''),
    }),
    wanted.length,
  );
  const text = new Map(
    wanted.map((entry, i) => [entry.path, blobs[i]?.content.toString('utf8') ?? '']),
  );
  const repo = repoFromTexts(
    root,
    text.get(MANIFEST_FILE) ?? '',
    hosts.map((host) => ({ entry: host.name, text: text.get(host.path) ?? '' })),
  );
  return { repo, source: { commit, uncommitted: parsePorcelainPaths(status.stdout) } };
}

/** The warning line for uncommitted paths (empty when there are none). */
export function uncommittedWarning(source: RepoSource): string {
  if (source.uncommitted.length === 0) return '';
  const shown = source.uncommitted.slice(0, 5).join(', ');
  const more = source.uncommitted.length > 5 ? ` and ${source.uncommitted.length - 5} more` : '';
  return `warning: uncommitted changes are not used (this reads commit ${source.commit.slice(0, 12)}): ${shown}${more}; commit them to use them`;
}
