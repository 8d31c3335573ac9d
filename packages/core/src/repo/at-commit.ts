/**
 * One source of truth for the verbs that compare or write (docs/classification.md): drift, plan,
 * install and reconcile read fleet.yaml, hosts/ and domains/ from the same commit — HEAD, resolved
 * once — and name it. What the working tree has not committed is not used, and said: an
 * uncommitted template edit is never silently "current, nothing to install". `fleet validate`
 * checks the working tree instead (what is about to be committed), and says so.
 */
import { FleetError } from '../errors.js';
import type { Git } from '../git.js';
import {
  DOMAINS_DIR,
  HOSTS_DIR,
  MANIFEST_FILE,
  openRepoCache,
  repoCacheHoldsHost,
  repoFromSources,
  type FleetRepo,
  type HostFileSource,
} from './load.js';

/** Where a verb read the repository. */
export interface RepoSource {
  /** The commit HEAD resolved to. */
  readonly commit: string;
  /** Paths under fleet.yaml, hosts/ and domains/ changed, staged or untracked: not used. */
  readonly uncommitted: readonly string[];
}

/**
 * The `git status` that lists what of fleet.yaml, hosts/ and domains/ is not committed yet (what
 * drift, plan and install do not read): the paths as git has them, untracked files included.
 */
export const UNCOMMITTED_STATUS_ARGS = [
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
] as const;

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

/** One entry of a git tree object, as `git ls-tree` names its type. */
export interface TreeEntry {
  readonly type: 'blob' | 'tree' | 'commit';
  /** Git's mode, as the tree has it: `100644`, `100755`, `120000` (a symbolic link), `40000`. */
  readonly mode: string;
  readonly oid: string;
  readonly name: string;
}

/**
 * The entries of a raw tree object (`<mode> <name>\0<binary oid>` each, as `git cat-file` gives
 * it); `oidBytes` is 20 in a SHA-1 repository, 32 in a SHA-256 one. A symbolic link is a blob, as
 * `ls-tree` says.
 */
export function parseTreeObject(content: Buffer, oidBytes: number): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    const nul = content.indexOf(0x00, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + oidBytes > content.length) {
      throw new FleetError('REPO_INVALID', 'git returned a malformed tree object');
    }
    const mode = content.subarray(offset, space).toString('latin1');
    entries.push({
      type: mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob',
      mode,
      name: content.subarray(space + 1, nul).toString('utf8'),
      oid: content.subarray(nul + 1, nul + 1 + oidBytes).toString('hex'),
    });
    offset = nul + 1 + oidBytes;
  }
  return entries;
}

/**
 * fleet.yaml and hosts/ as committed at HEAD, validated like the working tree's
 * (`repoFromTexts`), and the uncommitted paths of fleet.yaml, hosts/ and domains/. Two git
 * processes started together, whatever the number of hosts: `git status`, and one
 * `git cat-file --batch` that resolves HEAD once, then reads fleet.yaml and the hosts/ tree at
 * that commit, then the host files the parsed repo cache does not hold (git itself reads the refs,
 * packed or loose, of whichever worktree: nothing here reads .git). A host file whose blob id the
 * cache holds is not read at all (contract §14: a fleet of 1,000 hosts reads 1,000 blobs
 * otherwise, every call): in a SHA-1 repository the tree's id of a blob is the cache's key, the
 * id of its content, so the cached variables are those of exactly that text. In a SHA-256
 * repository the ids differ, and every host file is read.
 */
export async function loadRepoAtHead(
  root: string,
  git: Git,
  options: {
    /**
     * Other files to read at the same commit, in the same `git cat-file` (a domain's repository
     * manifest, `domains/files/files.yaml`: one git process fewer than a `git show` of its own).
     */
    readonly alsoRead?: readonly string[];
  } = {},
): Promise<{
  readonly repo: FleetRepo;
  readonly source: RepoSource;
  /** The texts of `alsoRead` at the commit, by path; `null` where the commit has no such file. */
  readonly files: ReadonlyMap<string, string | null>;
}> {
  const status = git.run([...UNCOMMITTED_STATUS_ARGS]);
  status.catch(() => undefined); // awaited below, unless HEAD already failed the load
  const batch = git.catFile();
  try {
    const [head] = await batch.read(['HEAD^{commit}']).catch(() => [null]);
    if (!head || head.type !== 'commit') {
      throw new FleetError(
        'REPO_INVALID',
        `the fleet repository at ${root} has no commit yet: commit fleet.yaml, hosts/ and domains/ first (drift, plan and install read the last commit)`,
      );
    }
    const commit = head.oid;
    const also = options.alsoRead ?? [];
    const [manifest, hostsTree, ...others] = await batch.read([
      `${commit}:${MANIFEST_FILE}`,
      `${commit}:${HOSTS_DIR}`,
      ...also.map((path) => `${commit}:${path}`),
    ]);
    const files = new Map(
      also.map((path, i) => {
        const entry = others[i];
        return [path, entry?.type === 'blob' ? entry.content.toString('utf8') : null] as const;
      }),
    );
    if (!manifest || manifest.type !== 'blob') {
      throw new FleetError(
        'REPO_NOT_FOUND',
        `no ${MANIFEST_FILE} in commit ${commit.slice(0, 12)} of ${root}: commit it first`,
      );
    }
    const hosts = (
      hostsTree?.type === 'tree' ? parseTreeObject(hostsTree.content, commit.length / 2) : []
    )
      .filter((entry) => !entry.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const cache = openRepoCache(root);
    const sha1 = commit.length === 40;
    const known = (host: TreeEntry) => sha1 && repoCacheHoldsHost(cache, host.oid);
    const wanted = hosts.filter(
      (host) => host.type === 'blob' && host.name.endsWith('.yaml') && !known(host),
    );
    const blobs = await batch.read(wanted.map((host) => host.oid));
    const text = new Map(
      wanted.map((host, i) => [host.name, blobs[i]?.content.toString('utf8') ?? '']),
    );
    const sources = hosts.map((host): HostFileSource =>
      host.type === 'blob' && host.name.endsWith('.yaml') && known(host)
        ? { entry: host.name, blob: host.oid }
        : { entry: host.name, text: text.get(host.name) ?? '' },
    );
    const repo = repoFromSources(root, manifest.content.toString('utf8'), sources, cache);
    return {
      repo,
      source: { commit, uncommitted: parsePorcelainPaths((await status).stdout) },
      files,
    };
  } finally {
    batch.close();
  }
}

/** The warning line for uncommitted paths (empty when there are none). */
export function uncommittedWarning(source: RepoSource): string {
  if (source.uncommitted.length === 0) return '';
  const shown = source.uncommitted.slice(0, 5).join(', ');
  const more = source.uncommitted.length > 5 ? ` and ${source.uncommitted.length - 5} more` : '';
  return `warning: uncommitted changes are not used (this reads commit ${source.commit.slice(0, 12)}): ${shown}${more}; commit them to use them`;
}
