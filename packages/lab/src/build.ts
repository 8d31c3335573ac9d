/**
 * `fleet lab build` (docs/runtime-lifecycle.md, "A second build on a lab"): packs the runtime
 * artifact from the fleet checkout the CLI runs from — `npm pack -w packages/cli`, the release
 * path, whose prepack writes the build record and bundles the dependencies, with the third-party
 * plugins the lab repo's fleet.yaml pins carried in through `FLEET_RUNTIME_PLUGINS` (contract
 * §10.5) — and pins it in the lab's repository: `artifacts/fleet-cli-<V>.tgz`, an `artifacts`
 * entry with its sha256 and the commit its own build record names (contract §1.8), optionally
 * `canonicalVersion: V`, one commit.
 *
 * With a version V other than the checkout's, the packed package says V (`package.json` and the
 * oclif manifest), so the node reports V and acceptance holds it; the build record then says so
 * (`versionSet: { by: 'fleet lab build', from, to }`), and every reader checks it against the
 * package. That is how one checkout gives a lab the second build `upgrade` and `rollback` need.
 *
 * Refused before anything is packed or written (exit 2): a DIR that holds no lab (without DIR, a
 * `$FLEET_REPO` that is not a lab's repository), a V that is not
 * a semantic version or that fleet.yaml already lists, a fleet that does not run from a checkout,
 * a pinned plugin whose tarball is missing or is not the one pinned; (exit 3) a fleet.yaml with
 * uncommitted changes, which the commit would otherwise take along.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rename,
  rm,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BuildRecord, FleetManifest, Git, LabDocument, PinnedPlugin } from '@fleet/core';
import * as core from '@fleet/core';
import { readTgz } from '@fleet/controller';
import { DEFAULT_LAB_DIR, labLayout } from './layout.js';
import { readLabDocument } from './state.js';

export interface LabBuildOptions {
  /** The lab directory (`fleet lab up --dir`); default: the lab `fleetRepo` belongs to, else `.fleet-lab`. */
  readonly dir?: string;
  /** `$FLEET_REPO`, when set: without `dir` it must be a lab's repository. */
  readonly fleetRepo?: string;
  /** The version the artifact is to have (default: the checkout's @fleet/cli version). */
  readonly version?: string;
  /** Also make it fleet.yaml's `canonicalVersion`. */
  readonly canonical?: boolean;
  /** The fleet checkout to pack: the root of the workspace the running CLI belongs to. */
  readonly checkout: string;
  readonly progress?: (line: string) => void;
}

export interface LabBuildResult {
  readonly repo: string;
  /** Relative to the repo: `artifacts/fleet-cli-<V>.tgz`. */
  readonly file: string;
  readonly version: string;
  readonly sha256: string;
  readonly bytes: number;
  /** The commit label its build record names (`-dirty` for a checkout with uncommitted changes). */
  readonly commit: string;
  readonly checkout: string;
  /** The version was set by the lab (the checkout's was `from`); `null` when packed as it is. */
  readonly versionSet: { readonly from: string; readonly to: string } | null;
  readonly plugins: readonly PinnedPlugin[];
  readonly canonicalVersion: string;
  /** The lab repo's commit that pins it. */
  readonly repoCommit: string;
  /** What the operator should know (e.g. `$FLEET_REPO` names another repository). */
  readonly warnings: readonly string[];
}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * Why fleet.yaml cannot take version `version` (pure): not a semantic version, or already listed.
 * `null` when it can.
 */
export function labBuildRefusal(manifest: FleetManifest, version: string): string | null {
  if (!SEMVER.test(version)) {
    return `--version ${JSON.stringify(version)} is not a semantic version (MAJOR.MINOR.PATCH[-PRE], e.g. 0.2.0)`;
  }
  const listed = manifest.artifacts.find((artifact) => artifact.version === version);
  if (listed !== undefined) {
    return `fleet.yaml already lists version ${version} (${listed.file}): give another --version`;
  }
  return null;
}

/** Reads back what will be pinned: the package's version and the build record, checked. */
function packedIdentity(tgz: Buffer, file: string, version: string) {
  const entries = readTgz(tgz);
  const text = (path: string) =>
    entries.find((entry) => entry.path === path && entry.type === 'file')?.data.toString('utf8');
  const pkg = JSON.parse(text('package/package.json') ?? '{}') as { version?: unknown };
  const recordText = text(core.BUILD_RECORD_ENTRY);
  if (recordText === undefined) {
    throw new core.FleetError('ARTIFACT_PROVENANCE', `${file} carries no build record`);
  }
  const record = core.parseBuildRecord(recordText, `${file}: ${core.BUILD_RECORD_ENTRY}`);
  const problem =
    pkg.version === version
      ? core.versionSetProblem(file, version, record)
      : `${file} is version ${String(pkg.version)}, not ${version}`;
  if (problem !== null) throw new core.FleetError('GENERATION_INVALID', problem);
  return record;
}

async function writeAtomic(path: string, data: Buffer | string): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, data, { flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

const real = (path: string): Promise<string> => realpath(path).catch(() => path);

/**
 * The lab to build into: `dir`, else the lab whose repository `$FLEET_REPO` is (`lab up` puts it
 * at DIR/repo), else `.fleet-lab`. A `$FLEET_REPO` that is no lab's repository is refused rather
 * than passed over: the operator meant that repository, and lab build writes only into a lab's.
 */
async function chooseLab(options: LabBuildOptions) {
  const warnings: string[] = [];
  let dir = options.dir;
  if (dir === undefined && options.fleetRepo !== undefined) {
    const repo = await real(options.fleetRepo);
    const candidate = dirname(repo);
    const document = await readLabDocument(labLayout(candidate).labFile).catch(() => undefined);
    if (document === undefined || (await real(document.repo)) !== repo) {
      throw new core.FleetError(
        'USAGE',
        `$FLEET_REPO is ${options.fleetRepo}, which is not a lab's repository (no lab.json of a lab beside it): lab build writes only into a lab; name one with --dir`,
      );
    }
    dir = candidate;
  }
  dir ??= DEFAULT_LAB_DIR;
  const document = await readLabDocument(labLayout(await real(dir)).labFile);
  if (document === undefined) {
    throw new core.FleetError(
      'USAGE',
      `${dir} holds no lab (no lab.json): start one with fleet lab up --dir ${dir}`,
    );
  }
  if (
    options.fleetRepo !== undefined &&
    (await real(options.fleetRepo)) !== (await real(document.repo))
  ) {
    warnings.push(
      `warning: $FLEET_REPO is ${options.fleetRepo}, not this lab's repository ${document.repo}: verbs run with it will not see this build`,
    );
  }
  return { document, warnings };
}

export async function labBuild(options: LabBuildOptions): Promise<LabBuildResult> {
  const { document, warnings } = await chooseLab(options);
  const repo = document.repo;
  const manifestPath = join(repo, core.MANIFEST_FILE);
  const manifestText = await readFile(manifestPath, 'utf8').catch(() => {
    throw new core.FleetError('REPO_NOT_FOUND', `the lab's repository ${repo} has no fleet.yaml`);
  });
  const manifest = core.parseManifest(manifestText);
  const checkout = await realpath(options.checkout);
  const from = await core.fleetCheckoutVersion(checkout);
  const version = options.version ?? from;
  const refusal = labBuildRefusal(manifest, version);
  if (refusal !== null) throw new core.FleetError('USAGE', refusal);
  const git = core.createGit(repo);
  const status = await git.run(['status', '--porcelain=v1', '--', core.MANIFEST_FILE]);
  if (status.stdout.trim() !== '') {
    throw new core.FleetError(
      'REPO_DIRTY',
      `${manifestPath} has uncommitted changes: commit or discard them first (lab build commits fleet.yaml)`,
    );
  }
  const packed = await packLabRuntime({ repo, manifest, checkout, from, version, options });
  const canonical = options.canonical === true;
  const repoCommit = await pinLabArtifact({
    git,
    document,
    manifestText,
    packed,
    from,
    version,
    canonical,
  });
  return {
    repo,
    file: packed.file,
    version,
    sha256: packed.sha256,
    bytes: packed.tgz.length,
    commit: packed.commit,
    checkout,
    versionSet: version === from ? null : { from, to: version },
    plugins: packed.record.plugins,
    canonicalVersion: canonical ? version : manifest.canonicalVersion,
    repoCommit,
    warnings,
  };
}

/** The runtime packed, its version set, and what it carries checked against fleet.yaml's pins. */
interface PackedRuntime {
  /** Relative to the repo: `artifacts/fleet-cli-<V>.tgz`. */
  readonly file: string;
  readonly tgz: Buffer;
  readonly record: BuildRecord;
  readonly sha256: string;
  /** The commit label its build record names. */
  readonly commit: string;
}

async function packLabRuntime(input: {
  readonly repo: string;
  readonly manifest: FleetManifest;
  readonly checkout: string;
  readonly from: string;
  readonly version: string;
  readonly options: LabBuildOptions;
}): Promise<PackedRuntime> {
  const { checkout, from, version, manifest } = input;
  const plugins = await core.pinnedPluginTarballs(input.repo, manifest);
  const file = `artifacts/${core.packedFileName(core.RUNTIME_PACKAGE, version)}`;
  const scratch = await mkdtemp(join(tmpdir(), 'fleet-lab-build-'));
  let tgz: Buffer;
  try {
    input.options.progress?.(
      `packing the runtime from ${checkout} (npm pack -w packages/cli${plugins.length > 0 ? `, ${plugins.length} plugin${plugins.length === 1 ? '' : 's'}` : ''})…`,
    );
    tgz = await readFile(await core.npmPackRuntime(checkout, scratch, plugins));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  if (version !== from) tgz = core.withPackageVersion(tgz, from, version, core.VERSION_SET_BY_LAB);
  const record = packedIdentity(tgz, file, version);
  const mismatches = core.pluginMismatches(manifest.plugins, record.plugins);
  if (mismatches.length > 0) {
    throw new core.FleetError(
      'ARTIFACT_PLUGINS',
      mismatches.map((m) => core.describePluginMismatch(m, file)).join('; '),
    );
  }
  const sha256 = createHash('sha256').update(tgz).digest('hex');
  return { file, tgz, record, sha256, commit: core.commitLabel(record) };
}

/**
 * Writes the artifact into the lab's repository and pins it in fleet.yaml, signed, in one commit;
 * returns that commit.
 */
async function pinLabArtifact(input: {
  readonly git: Git;
  readonly document: LabDocument;
  readonly manifestText: string;
  readonly packed: PackedRuntime;
  readonly from: string;
  readonly version: string;
  readonly canonical: boolean;
}): Promise<string> {
  const { git, document, packed, from, version, canonical } = input;
  const { repo } = document;
  const { file, tgz, sha256, commit } = packed;
  await mkdir(join(repo, 'artifacts'), { recursive: true });
  await writeAtomic(join(repo, ...file.split('/')), tgz);
  // Signed with the lab's key, which its nodes trust (lab up made it): a lab runs the real path.
  const key = await core.signingKey(core.defaultSigningKeyFile(document.credentials), {
    create: true,
  });
  const signature = await core.signArtifact(tgz, key);
  const edited = core.manifestWithSigningKey(
    core.manifestWithArtifact(
      input.manifestText,
      { version, file, sha256, commit, signature },
      canonical,
    ),
    key.publicKey,
  );
  await writeAtomic(join(repo, core.MANIFEST_FILE), edited);
  await git.run(['add', '--', core.MANIFEST_FILE, file]);
  await git.run([
    ...(await core.identityArgs(git)),
    'commit',
    '--quiet',
    '-m',
    `lab build: ${core.RUNTIME_PACKAGE} ${version}${version === from ? '' : ` (version set by fleet lab build, from ${from})`}, built from ${commit}${canonical ? '; canonicalVersion' : ''}`,
    '--',
    core.MANIFEST_FILE,
    file,
  ]);
  return (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
}
