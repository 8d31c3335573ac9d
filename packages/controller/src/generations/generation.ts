/**
 * Staging an immutable runtime generation (contract §12, catalogue 49) from an `npm pack` tarball:
 *
 * 1. the artifact is read once into memory and its sha256 checked against the expected build id
 *    (a mismatch is `GENERATION_INVALID`, nothing is created);
 * 2. an existing `generations/<build-id>/` is never overwritten: it is verified and reused, or —
 *    when it does not verify — refused with `GENERATION_INVALID`;
 * 3. otherwise the tarball is unpacked (strictly: see `tar.ts`) into a temp directory beside the
 *    generations, every file created exclusively and fsync'd, the artifact copied in, the manifest
 *    (`generation.json`, with the tree hash) written, files made 0444 and directories 0555, every
 *    directory fsync'd;
 * 4. the temp directory is verified again from disk (artifact sha256 and tree hash: "after");
 * 5. it is renamed into place and the generations directory fsync'd.
 *
 * A crash leaves either no generation or a complete one; a leftover temp directory is swept by
 * the next stage. The manifest and the verification from disk (steps 2 and 4) are in verify.ts.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  BUILD_ID_PATTERN,
  BUILD_RECORD_ENTRY,
  commitLabel,
  FleetError,
  GENERATION_ARTIFACT,
  GENERATION_MANIFEST,
  parseBuildRecord,
  runtimeLayout,
  WIN32_MAX_PATH_CHARS,
  type Platform,
  type RuntimeLayout,
} from '@fleet/core/node';
import { failpoint } from '../failpoints.js';
import { ensurePrivateDir, fsyncDir, syncHandle } from '../fs/durable.js';
import { fsFailure } from '../fs/errors.js';
import { TEMP_PREFIX } from '../state-paths.js';
import { DEFAULT_TAR_LIMITS, readTgz, type TarLimits } from './tar.js';
import { sha256Hex, tarTreeHash } from './tree.js';
import {
  GENERATION_SCHEMA,
  MODES_APPLY,
  invalid,
  verifyDirectory,
  verifyGeneration,
  type GenerationManifest,
} from './verify.js';

export interface StageInput {
  readonly home: string;
  readonly platform: Platform;
  /** Path of the `.tgz` (as `npm pack` writes it). */
  readonly artifact: string;
  /** The expected sha256 of the artifact: the build id. */
  readonly sha256: string;
  /**
   * The commit label the caller expects the artifact to carry (the operator's acceptance target):
   * checked against the artifact's build record before anything is written, and against an
   * existing generation's manifest when one is reused. `undefined`: not checked.
   */
  readonly commit?: string | null;
  readonly now?: () => Date;
  readonly limits?: TarLimits;
}

export interface StagedGeneration {
  readonly buildId: string;
  readonly directory: string;
  readonly manifest: GenerationManifest;
  /** True when an identical generation was already there (nothing was written). */
  readonly reused: boolean;
}

const CREATE_EXCLUSIVE =
  constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0);

/** Removes a (possibly read-only) tree: directories are made writable first. */
export async function removeTree(path: string): Promise<void> {
  const unlock = async (dir: string): Promise<void> => {
    let stats;
    try {
      stats = await lstat(dir);
    } catch {
      return;
    }
    if (!stats.isDirectory()) return;
    await chmod(dir, 0o700);
    for (const name of await readdir(dir)) await unlock(join(dir, name));
  };
  await unlock(path);
  await rm(path, { recursive: true, force: true });
}

/**
 * The name of a staging directory beside the generations: hardly longer than a Windows
 * generation's own (17 characters against 16), since every path of the unpacked tree lies below
 * it too, within WIN32_GENERATION_PATH_BUDGET (docs/runtime-lifecycle.md, "Windows paths").
 */
export function stagingName(): string {
  return `${TEMP_PREFIX}${randomBytes(3).toString('hex')}`;
}

/** Removes staging directories a crash left behind (`generations/.fleet-tmp-*`). */
export async function sweepStaging(layout: RuntimeLayout): Promise<number> {
  let names: string[];
  try {
    names = await readdir(layout.generations);
  } catch {
    return 0;
  }
  let swept = 0;
  for (const name of names.filter((n) => n.startsWith(TEMP_PREFIX))) {
    await removeTree(join(layout.generations, name));
    swept += 1;
  }
  if (swept > 0) await fsyncDir(layout.generations, 'generations');
  return swept;
}

async function writeExclusive(path: string, data: Uint8Array): Promise<void> {
  const handle = await open(path, CREATE_EXCLUSIVE, 0o444);
  try {
    // Exactly 0444 whatever the umask: the controller's unit runs with UMask=0077, under which
    // the mode given to open() would leave 0400 and the generation would not verify.
    if (MODES_APPLY) await handle.chmod(0o444);
    await handle.writeFile(data);
    await syncHandle(handle, path);
  } finally {
    await handle.close();
  }
}

/** Directories deepest first, so a parent is sealed after its children. */
async function sealDirectories(root: string): Promise<void> {
  const dirs: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(dir, entry.name));
    }
    dirs.push(dir);
  };
  await walk(root);
  for (const dir of dirs) {
    await fsyncDir(dir, 'generation directory');
    if (MODES_APPLY) await chmod(dir, 0o555);
  }
}

function packageOf(entries: ReturnType<typeof readTgz>): GenerationManifest['package'] {
  const pkg = entries.find(
    (entry) => entry.path === 'package/package.json' && entry.type === 'file',
  );
  if (!pkg) return null;
  try {
    const value = JSON.parse(pkg.data.toString('utf8')) as { name?: unknown; version?: unknown };
    return typeof value.name === 'string' && typeof value.version === 'string'
      ? { name: value.name, version: value.version }
      : null;
  } catch {
    return null;
  }
}

/**
 * Stages `input.artifact` as `generations/<sha256>/`. Idempotent for an identical generation;
 * `GENERATION_INVALID` for a wrong sha256, a bad tarball or a mismatching existing generation.
 * Callers hold the runtime lock (`withRuntimeLock`).
 */
export async function stageGeneration(input: StageInput): Promise<StagedGeneration> {
  const buildId = input.sha256.toLowerCase();
  if (!BUILD_ID_PATTERN.test(buildId))
    throw invalid(`build id ${JSON.stringify(input.sha256)} is not a sha256`);
  const layout = runtimeLayout(input.home, input.platform);
  const directory = layout.generation(buildId);

  let artifact: Buffer;
  try {
    artifact = await readFile(input.artifact);
  } catch (error) {
    throw fsFailure(error, 'artifact');
  }
  const actual = sha256Hex(artifact);
  if (actual !== buildId) {
    throw invalid(`artifact sha256 ${actual} differs from the expected ${buildId}; nothing staged`);
  }

  const existing = await lstat(directory).catch(() => undefined);
  if (existing) return reuse(layout, buildId, directory, input.commit);

  const entries = readTgz(artifact, input.limits ?? DEFAULT_TAR_LIMITS);
  if (input.platform === 'win32') checkWindowsPaths(layout, directory, entries);
  const commit = carriedCommit(entries);
  checkCommit(input.commit, commit, 'the artifact was built from');
  const expectedTree = tarTreeHash(entries);
  const manifest: GenerationManifest = {
    schema: GENERATION_SCHEMA,
    buildId,
    treeHash: expectedTree.hash,
    files: expectedTree.files,
    bytes: expectedTree.bytes,
    package: packageOf(entries),
    commit,
    stagedAt: (input.now ?? (() => new Date()))().toISOString(),
  };

  await ensurePrivateDir(input.home, layout.generations);
  await sweepStaging(layout);
  const temp = join(layout.generations, stagingName());
  try {
    await mkdir(temp, { mode: 0o700 });
    for (const entry of entries) {
      const target = join(temp, ...entry.path.split('/'));
      if (entry.type === 'directory') {
        await mkdir(target, { recursive: true, mode: 0o700 });
        continue;
      }
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeExclusive(target, entry.data);
    }
    await writeExclusive(join(temp, GENERATION_ARTIFACT), artifact);
    await writeExclusive(
      join(temp, GENERATION_MANIFEST),
      Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
    );
    await sealDirectories(temp);
    const check = await verifyDirectory(temp, buildId);
    if (!check.ok)
      throw invalid(`the staged generation does not verify; nothing staged`, check.problems);
    await failpoint('runtime.stage.before_rename');
    if (await lstat(directory).catch(() => undefined)) {
      // Appeared while we unpacked: never replace it.
      await removeTree(temp);
      return reuse(layout, buildId, directory, input.commit);
    }
    await rename(temp, directory);
  } catch (error) {
    await removeTree(temp).catch(() => undefined);
    throw fsFailure(error, 'staging the generation');
  }
  await fsyncDir(layout.generations, 'generations');
  return { buildId, directory, manifest, reused: false };
}

async function reuse(
  layout: RuntimeLayout,
  buildId: string,
  directory: string,
  expectedCommit: string | null | undefined,
): Promise<StagedGeneration> {
  const check = await verifyGeneration(layout, buildId);
  if (!check.ok) {
    throw invalid(
      `generations/${buildId} already exists and does not verify; it is never overwritten`,
      check.problems,
    );
  }
  // A generation staged before its commit was read from the artifact may record another one; the
  // runtime started from it would report that, so it is refused here rather than at acceptance.
  checkCommit(expectedCommit, check.manifest.commit, `generations/${buildId} records`);
  return { buildId, directory, manifest: check.manifest, reused: true };
}

/**
 * A generation the node already holds, for a stage that sent no bytes (contract §12): verified
 * again from disk — manifest, `artifact.tgz`'s sha256 = build id, tree hash, modes — never trusting
 * the request. Missing or not verifying is `GENERATION_NOT_HELD` (the operator uploads instead);
 * a verified generation of another commit than expected is `GENERATION_INVALID`, as it is for an
 * upload (the upload would meet the same generation). Callers hold the runtime lock.
 */
export async function heldGeneration(
  home: string,
  platform: Platform,
  sha256: string,
  expectedCommit: string | null | undefined,
): Promise<StagedGeneration> {
  const buildId = sha256.toLowerCase();
  if (!BUILD_ID_PATTERN.test(buildId))
    throw invalid(`build id ${JSON.stringify(sha256)} is not a sha256`);
  const layout = runtimeLayout(home, platform);
  const check = await verifyGeneration(layout, buildId);
  if (!check.ok) {
    throw new FleetError(
      'GENERATION_NOT_HELD',
      `this node holds no verified generation ${buildId} (${check.problems.join('; ')}); nothing was staged: send the artifact`,
      { problems: check.problems.map((message) => ({ message })) },
    );
  }
  checkCommit(expectedCommit, check.manifest.commit, `generations/${buildId} records`);
  return { buildId, directory: layout.generation(buildId), manifest: check.manifest, reused: true };
}

/**
 * On Windows, every path the generation would have — below its directory and below the staging
 * directory, which is never longer — must fit MAX_PATH (docs/runtime-lifecycle.md, "Windows
 * paths"): refused before anything is written, rather than failing half-way through the unpack.
 */
function checkWindowsPaths(
  layout: RuntimeLayout,
  directory: string,
  entries: ReturnType<typeof readTgz>,
): void {
  const staging = join(layout.generations, stagingName()).length;
  const base = Math.max(directory.length, staging) + 1;
  let longest = '';
  for (const entry of [...entries.map((e) => e.path), GENERATION_MANIFEST, GENERATION_ARTIFACT]) {
    if (entry.length > longest.length) longest = entry;
  }
  if (base + longest.length > WIN32_MAX_PATH_CHARS) {
    throw invalid(
      `the artifact's ${longest} would be a path of ${base + longest.length} characters in ${layout.generations}, past the ${WIN32_MAX_PATH_CHARS} a Windows path may have; nothing staged`,
    );
  }
}

/** The commit label of the tarball's build record; `null` when it has none. */
function carriedCommit(entries: ReturnType<typeof readTgz>): string | null {
  const entry = entries.find((e) => e.path === BUILD_RECORD_ENTRY && e.type === 'file');
  if (!entry) return null;
  return commitLabel(parseBuildRecord(entry.data.toString('utf8'), BUILD_RECORD_ENTRY));
}

function checkCommit(
  expected: string | null | undefined,
  actual: string | null,
  what: string,
): void {
  if (expected === undefined || expected === actual) return;
  throw invalid(
    `the request expects commit ${expected ?? '(none)'}, but ${what} ${actual ?? 'no commit'}; nothing staged`,
  );
}
