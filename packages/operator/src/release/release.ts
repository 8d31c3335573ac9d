/**
 * `fleet release` (docs/releases.md, ADR 0018): the runtime of the fleet you run, packed from the
 * checkout the CLI belongs to — `npm pack -w packages/cli`, whose prepack writes the build record
 * and carries the plugins fleet.yaml pins — into the repository's artifact store, pinned in
 * fleet.yaml as `canonicalVersion` and committed.
 *
 * - **Out of git history.** The bytes go to `.fleet/artifacts/<sha256>.tgz`, which the repository
 *   ignores (`/.fleet/` in `.gitignore`, added in the same commit); fleet.yaml pins the sha256 and
 *   the commit the build record names. A clone without the store rebuilds the artifact with
 *   `fleet release verify --restore` (release-verify.ts).
 * - **One version, one build.** The version is the checkout's `@fleet/cli` version. Packing the
 *   same commit again gives the same bytes (npm pack sorts entries and fixes times): a version
 *   fleet.yaml already pins at the same sha256 is `unchanged`; at another sha256 it is refused —
 *   a release is never silently replaced.
 * - **Signed**: an SSH signature over the tarball's bytes (core's runtime/signing.ts, ADR 0019), pinned beside its
 *   sha256; the signing key's public half joins fleet.yaml's `signing.keys`, which `fleet host
 *   add` writes into each new node's policy as its trusted keys.
 * - Refused before anything is packed: a fleet not run from a checkout, a fleet.yaml with
 *   uncommitted changes (the commit would take them along); after packing, before anything is
 *   written: a pinned plugin the artifact does not carry as pinned.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@fleet/core';
import { writeFileAtomic } from '../fs/atomic.js';
import {
  mergedNodes,
  parseNodeSpec,
  samePins,
  storeNode,
  type ShippedNode,
} from './node-binary.js';
import { storeFile, writeStore } from './store.js';
import { loadArtifact } from '../runtime/artifact.js';

// The Node.js pins' merge lives with the Node.js builds; callers and tests import it from here.
export { mergedNodes } from './node-binary.js';

const IGNORE_LINE = '/.fleet/';

export interface ReleaseOptions {
  /** The fleet repository. */
  readonly root: string;
  /** The fleet checkout the running CLI belongs to. */
  readonly checkout: string;
  readonly confirm: boolean;
  /** The Ed25519 key to sign with (default: `signing_ed25519` beside the credentials file). */
  readonly signingKey?: string;
  /**
   * The version to release (default: the checkout's). Another one is written into the packed
   * package and its build record says `versionSet: { by: 'fleet release', from, to }`.
   */
  readonly version?: string;
  /** Plugin directories to pack and pin in the same release (contract §10.5). */
  readonly plugins?: readonly string[];
  /** The Node.js builds to ship with it: `PLATFORM` or `PLATFORM=FILE` (node-binary.ts). */
  readonly nodes?: readonly string[];
  readonly progress: (line: string) => void;
}

export interface ReleaseResult {
  readonly outcome: 'planned' | 'released' | 'unchanged';
  readonly version: string;
  readonly checkout: string;
  /** Relative to the repository: `.fleet/artifacts/<sha256>.tgz`; `null` when only planned. */
  readonly file: string | null;
  readonly sha256: string | null;
  readonly bytes: number | null;
  /** The commit label its build record names. */
  readonly commit: string | null;
  readonly plugins: readonly core.PinnedPlugin[];
  /** The repository commit that pins it; `null` when nothing was committed. */
  readonly repoCommit: string | null;
  /** The public key it is signed with (`ssh-keygen -Y sign`, namespace fleet-release). */
  readonly signedBy: string | null;
  readonly warnings: readonly string[];
}

export async function release(options: ReleaseOptions): Promise<ReleaseResult> {
  const repo = await readReleasableRepo(options);
  const { version, manifest } = repo;
  const base = { version, checkout: options.checkout, plugins: manifest.plugins, warnings: [] };
  if (!options.confirm) return { ...base, outcome: 'planned', ...NOTHING_RELEASED };
  const key = await core.signingKey(options.signingKey);
  const packed = await packRelease(options, version, repo.manifestText);
  const stored = await storeRelease(options.root, packed, version, repo.from);
  const { file, sha256, commit, tgz } = stored;
  const warnings = dirtyCheckoutWarnings(commit);
  const listed = manifest.artifacts.find((entry) => entry.version === version);
  refuseReplacedRelease(listed, version, sha256, commit);
  // The result's keys keep one order whatever the outcome: `--json` prints them as they are.
  const result = (outcome: 'unchanged' | 'released', repoCommit: string | null): ReleaseResult => ({
    ...base,
    warnings,
    outcome,
    file,
    sha256,
    bytes: tgz.length,
    commit,
    repoCommit,
    signedBy: key.publicKey,
  });
  if (isReleaseUnchanged(repo, packed, stored, listed, key.publicKey))
    return result('unchanged', null);
  options.progress(`signing it with ${key.privateKeyFile} (ssh-keygen -Y sign -n fleet-release)…`);
  const signature = await core.signArtifact(tgz, key);
  const pin = { version, file, sha256, commit, signature };
  const edited = core.manifestWithSigningKey(
    core.manifestWithArtifact(packed.text, withNodePins(pin, listed, packed.nodes), true),
    key.publicKey,
  );
  await writeFileAtomic(repo.manifestPath, edited);
  const repoCommit = await commitRelease(repo, packed, stored, key.publicKey);
  return result('released', repoCommit);
}

/** The fields of a result that names no artifact: a planned release. */
const NOTHING_RELEASED = {
  file: null,
  sha256: null,
  bytes: null,
  commit: null,
  repoCommit: null,
  signedBy: null,
} as const;

/** The version's entry in fleet.yaml's `artifacts`, when it already has one. */
type ListedArtifact = core.FleetManifest['artifacts'][number];

/** The repository as a release finds it, once it is known it may be released into. */
interface ReleasableRepo {
  readonly root: string;
  readonly git: core.Git;
  readonly manifestPath: string;
  readonly manifestText: string;
  readonly manifest: core.FleetManifest;
  /** The checkout's own version. */
  readonly from: string;
  /** The version to release. */
  readonly version: string;
}

/**
 * Reads fleet.yaml and the version to release; refuses a version that is not semver and a
 * fleet.yaml or .gitignore with uncommitted changes, before anything is packed.
 */
async function readReleasableRepo(options: ReleaseOptions): Promise<ReleasableRepo> {
  const manifestPath = join(options.root, core.MANIFEST_FILE);
  const manifestText = await readFile(manifestPath, 'utf8');
  const manifest = core.parseManifest(manifestText);
  const from = await core.fleetCheckoutVersion(options.checkout);
  const version = options.version ?? from;
  if (core.parseSemver(version) === null) {
    throw new core.FleetError(
      'USAGE',
      `--version ${JSON.stringify(version)} is not a semantic version (MAJOR.MINOR.PATCH[-PRE], e.g. 0.2.0)`,
    );
  }
  const git = core.createGit(options.root);
  const dirty = await git.run(['status', '--porcelain=v1', '--', core.MANIFEST_FILE, '.gitignore']);
  if (dirty.stdout.trim() !== '') {
    throw new core.FleetError(
      'REPO_DIRTY',
      `${core.MANIFEST_FILE} or .gitignore has uncommitted changes: commit or discard them first (fleet release commits them); nothing was packed`,
    );
  }
  return { root: options.root, git, manifestPath, manifestText, manifest, from, version };
}

/** What packing a release produced, before anything is written into the repository. */
interface PackedRelease {
  readonly tgz: Buffer;
  /** fleet.yaml's text with the plugins packed alongside pinned. */
  readonly text: string;
  /** The plugin tarballs written for the release commit, relative to the repository. */
  readonly pluginFiles: readonly string[];
  readonly nodes: readonly ShippedNode[];
}

/** Packs the named plugins, the runtime and the Node.js builds in a scratch directory. */
async function packRelease(
  options: ReleaseOptions,
  version: string,
  manifestText: string,
): Promise<PackedRelease> {
  const nodeSpecs = (options.nodes ?? []).map(parseNodeSpec);
  const scratch = await mkdtemp(join(tmpdir(), 'fleet-release-'));
  let text = manifestText;
  const pluginFiles: string[] = [];
  const nodes: ShippedNode[] = [];
  try {
    for (const dir of options.plugins ?? []) {
      const packed = await packPlugin(options.root, dir, scratch, options.progress);
      text = core.manifestWithPlugin(text, packed);
      pluginFiles.push(core.pinnedTarballPath(packed));
    }
    const plugins = await core.pinnedPluginTarballs(options.root, core.parseManifest(text));
    options.progress(
      `packing ${core.RUNTIME_PACKAGE} ${version} from ${options.checkout} (npm pack -w packages/cli${plugins.length > 0 ? `, ${plugins.length} plugin${plugins.length === 1 ? '' : 's'}` : ''})…`,
    );
    const tgz = await readFile(await core.npmPackRuntime(options.checkout, scratch, plugins));
    for (const spec of nodeSpecs)
      nodes.push(await storeNode(options.root, spec, scratch, options.progress));
    return { tgz, text, pluginFiles, nodes };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The runtime artifact as written into the store and read back. */
interface StoredRelease {
  readonly tgz: Buffer;
  readonly file: string;
  readonly sha256: string;
  /** The commit label its build record names. */
  readonly commit: string;
  readonly packageName: string;
}

/**
 * Sets the release's version into the packed bytes when it is not the checkout's, writes them into
 * the store and reads them back as every later verb does: build record, version, pinned plugins.
 */
async function storeRelease(
  root: string,
  packed: PackedRelease,
  version: string,
  from: string,
): Promise<StoredRelease> {
  const tgz =
    version === from
      ? packed.tgz
      : core.withPackageVersion(packed.tgz, from, version, core.VERSION_SET_BY_RELEASE);
  const pinned = core.parseManifest(packed.text);
  const sha256 = createHash('sha256').update(tgz).digest('hex');
  const file = storeFile(sha256);
  await writeStore(join(root, file), tgz);
  const artifact = await loadArtifact(root, file, undefined, pinned.plugins);
  if (artifact.identity.version !== version) {
    throw new core.FleetError(
      'GENERATION_INVALID',
      `${file} is version ${artifact.identity.version}, not ${version}`,
    );
  }
  const commit = artifact.identity.commit as string;
  return { tgz, file, sha256, commit, packageName: artifact.identity.package };
}

/** The warning a release built from a checkout with uncommitted changes carries (pure). */
export function dirtyCheckoutWarnings(commit: string): string[] {
  return core.isDirtyLabel(commit)
    ? [
        `warning: the checkout has uncommitted changes (${commit}): this release cannot be rebuilt from its commit (contract §1.8); commit them and release again`,
      ]
    : [];
}

/** Refuses a version fleet.yaml already pins at other bytes: a release is never replaced. */
function refuseReplacedRelease(
  listed: ListedArtifact | undefined,
  version: string,
  sha256: string,
  commit: string,
): void {
  if (listed !== undefined && listed.sha256 !== sha256) {
    throw new core.FleetError(
      'USAGE',
      `fleet.yaml already pins ${version} at sha256 ${listed.sha256.slice(0, 12)}, and this pack is ${sha256.slice(0, 12)} (built from ${commit}): a release is never replaced — release another version (--version, or bump packages/cli's and commit)`,
    );
  }
}

/**
 * Whether fleet.yaml already pins exactly this release — same bytes, build, signed with a trusted
 * key, no new plugin or Node.js pin, already canonical — so nothing is to be written (pure).
 */
function isReleaseUnchanged(
  repo: ReleasableRepo,
  packed: PackedRelease,
  stored: StoredRelease,
  listed: ListedArtifact | undefined,
  publicKey: string,
): boolean {
  const trusted = repo.manifest.signing?.keys.includes(publicKey) === true;
  return (
    listed !== undefined &&
    listed.file === stored.file &&
    listed.commit === stored.commit &&
    listed.signature !== undefined &&
    trusted &&
    packed.text === repo.manifestText &&
    samePins(listed.node ?? [], packed.nodes) &&
    repo.manifest.canonicalVersion === repo.version
  );
}

/** The artifact pin with its Node.js builds: those shipped earlier stay unless named again (pure). */
function withNodePins<Pin extends object>(
  pin: Pin,
  listed: ListedArtifact | undefined,
  nodes: readonly ShippedNode[],
): Pin | (Pin & { node: ShippedNode[] }) {
  return nodes.length > 0 || listed?.node !== undefined
    ? { ...pin, node: mergedNodes(listed?.node ?? [], nodes) }
    : pin;
}

/** Commits fleet.yaml, .gitignore when it changed and the plugin tarballs; the new commit. */
async function commitRelease(
  repo: ReleasableRepo,
  packed: PackedRelease,
  stored: StoredRelease,
  publicKey: string,
): Promise<string> {
  const { git } = repo;
  const ignored = await ensureIgnored(repo.root);
  const paths = [core.MANIFEST_FILE, ...(ignored ? ['.gitignore'] : []), ...packed.pluginFiles];
  await git.run(['add', '--', ...paths]);
  await git.run([
    ...(await core.identityArgs(git)),
    'commit',
    '--quiet',
    '-m',
    `release ${core.RUNTIME_PACKAGE} ${repo.version}: canonicalVersion`,
    '-m',
    releaseCommitBody({ ...stored, bytes: stored.tgz.length }, publicKey, repo.manifest.plugins),
    '--',
    core.MANIFEST_FILE,
    ...(ignored ? ['.gitignore'] : []),
  ]);
  return (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
}

/** The release commit's body: what was pinned, built from what, signed by whom (pure). */
export function releaseCommitBody(
  stored: Pick<StoredRelease, 'sha256' | 'commit' | 'packageName'> & { readonly bytes: number },
  publicKey: string,
  plugins: readonly core.PinnedPlugin[],
): string {
  return [
    `sha256   ${stored.sha256}`,
    `bytes    ${stored.bytes}`,
    `built    from ${stored.commit}`,
    `signed   by ${publicKey}`,
    `package  ${stored.packageName}`,
    ...plugins.map((plugin) => `carries  ${plugin.name} ${plugin.version} ${plugin.sha256}`),
  ].join('\n');
}

/**
 * Packs the plugin in `dir` and puts its tarball where fleet.yaml's pin expects it
 * (`artifacts/plugins/<name>-<version>.tgz`, committed with the release: plugin tarballs are
 * small); the pin to write.
 */
async function packPlugin(
  root: string,
  dir: string,
  scratch: string,
  progress: (line: string) => void,
): Promise<core.PinnedPlugin> {
  progress(`packing the plugin in ${dir} (npm pack)…`);
  const packed = await core.npmPackPlugin(dir, scratch);
  const pin = { name: packed.name, version: packed.version, sha256: packed.sha256 };
  const target = join(root, core.pinnedTarballPath(pin));
  const held = await readFile(target).catch(() => null);
  if (held !== null && createHash('sha256').update(held).digest('hex') !== pin.sha256) {
    throw new core.FleetError(
      'ARTIFACT_PLUGINS',
      `${core.pinnedTarballPath(pin)} already holds another ${pin.name} ${pin.version}: a published plugin version is never replaced — bump the plugin's version`,
    );
  }
  await mkdir(join(target, '..'), { recursive: true });
  await writeStore(target, await readFile(packed.file), false);
  return pin;
}

/** Adds `/.fleet/` to the repository's .gitignore; true when the file changed. */
async function ensureIgnored(root: string): Promise<boolean> {
  const path = join(root, '.gitignore');
  const text = await readFile(path, 'utf8').catch(() => '');
  if (text.split('\n').some((line) => line.trim() === IGNORE_LINE)) return false;
  await writeFileAtomic(
    path,
    `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}# fleet's artifact store: the bytes stay out of history, fleet.yaml pins their sha256\n${IGNORE_LINE}\n`,
  );
  return true;
}
