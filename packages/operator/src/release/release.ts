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
import { parseNodeSpec, storeNode, type ShippedNode } from './node-binary.js';
import { storeFile, writeStore } from './store.js';
import { loadArtifact } from '../runtime/artifact.js';

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
  const base = { version, checkout: options.checkout, plugins: manifest.plugins, warnings: [] };
  if (!options.confirm) {
    return {
      ...base,
      outcome: 'planned',
      file: null,
      sha256: null,
      bytes: null,
      commit: null,
      repoCommit: null,
      signedBy: null,
    };
  }
  const key = await core.signingKey(options.signingKey);
  const nodeSpecs = (options.nodes ?? []).map(parseNodeSpec);
  const scratch = await mkdtemp(join(tmpdir(), 'fleet-release-'));
  let tgz: Buffer;
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
    tgz = await readFile(await core.npmPackRuntime(options.checkout, scratch, plugins));
    for (const spec of nodeSpecs)
      nodes.push(await storeNode(options.root, spec, scratch, options.progress));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  if (version !== from)
    tgz = core.withPackageVersion(tgz, from, version, core.VERSION_SET_BY_RELEASE);
  const pinned = core.parseManifest(text);
  const sha256 = createHash('sha256').update(tgz).digest('hex');
  const file = storeFile(sha256);
  await writeStore(join(options.root, file), tgz);
  // The same reading every later verb does: build record, version, the pinned plugins carried.
  const artifact = await loadArtifact(options.root, file, undefined, pinned.plugins);
  if (artifact.identity.version !== version) {
    throw new core.FleetError(
      'GENERATION_INVALID',
      `${file} is version ${artifact.identity.version}, not ${version}`,
    );
  }
  const commit = artifact.identity.commit as string;
  const warnings = core.isDirtyLabel(commit)
    ? [
        `warning: the checkout has uncommitted changes (${commit}): this release cannot be rebuilt from its commit (contract §1.8); commit them and release again`,
      ]
    : [];
  const listed = manifest.artifacts.find((entry) => entry.version === version);
  if (listed !== undefined && listed.sha256 !== sha256) {
    throw new core.FleetError(
      'USAGE',
      `fleet.yaml already pins ${version} at sha256 ${listed.sha256.slice(0, 12)}, and this pack is ${sha256.slice(0, 12)} (built from ${commit}): a release is never replaced — release another version (--version, or bump packages/cli's and commit)`,
    );
  }
  const trusted = manifest.signing?.keys.includes(key.publicKey) === true;
  if (
    listed !== undefined &&
    listed.file === file &&
    listed.commit === commit &&
    listed.signature !== undefined &&
    trusted &&
    text === manifestText &&
    samePins(listed.node ?? [], nodes) &&
    manifest.canonicalVersion === version
  ) {
    return {
      ...base,
      warnings,
      outcome: 'unchanged',
      file,
      sha256,
      bytes: tgz.length,
      commit,
      repoCommit: null,
      signedBy: key.publicKey,
    };
  }
  options.progress(`signing it with ${key.privateKeyFile} (ssh-keygen -Y sign -n fleet-release)…`);
  const signature = await core.signArtifact(tgz, key);
  const edited = core.manifestWithSigningKey(
    core.manifestWithArtifact(
      text,
      {
        version,
        file,
        sha256,
        commit,
        signature,
        // Node.js builds shipped earlier with this version stay unless named again.
        ...(nodes.length > 0 || listed?.node !== undefined
          ? { node: mergedNodes(listed?.node ?? [], nodes) }
          : {}),
      },
      true,
    ),
    key.publicKey,
  );
  await writeFileAtomic(manifestPath, edited);
  const ignored = await ensureIgnored(options.root);
  const paths = [core.MANIFEST_FILE, ...(ignored ? ['.gitignore'] : []), ...pluginFiles];
  await git.run(['add', '--', ...paths]);
  await git.run([
    ...(await core.identityArgs(git)),
    'commit',
    '--quiet',
    '-m',
    `release ${core.RUNTIME_PACKAGE} ${version}: canonicalVersion`,
    '-m',
    [
      `sha256   ${sha256}`,
      `bytes    ${tgz.length}`,
      `built    from ${commit}`,
      `signed   by ${key.publicKey}`,
      `package  ${artifact.identity.package}`,
      ...manifest.plugins.map(
        (plugin) => `carries  ${plugin.name} ${plugin.version} ${plugin.sha256}`,
      ),
    ].join('\n'),
    '--',
    core.MANIFEST_FILE,
    ...(ignored ? ['.gitignore'] : []),
  ]);
  const repoCommit = (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
  return {
    ...base,
    warnings,
    outcome: 'released',
    file,
    sha256,
    bytes: tgz.length,
    commit,
    repoCommit,
    signedBy: key.publicKey,
  };
}

/** The Node.js pins of a release: `added` replace earlier ones of their platform (pure). */
export function mergedNodes(
  earlier: readonly ShippedNode[],
  added: readonly ShippedNode[],
): ShippedNode[] {
  const byPlatform = new Map(earlier.map((node) => [node.platform, node]));
  for (const node of added) byPlatform.set(node.platform, node);
  return [...byPlatform.values()].sort((a, b) => a.platform.localeCompare(b.platform));
}

/** Whether `added` changes nothing of `earlier` (pure). */
function samePins(earlier: readonly ShippedNode[], added: readonly ShippedNode[]): boolean {
  return added.every((node) =>
    earlier.some(
      (pin) =>
        pin.platform === node.platform &&
        pin.sha256 === node.sha256 &&
        pin.integrity === node.integrity,
    ),
  );
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
