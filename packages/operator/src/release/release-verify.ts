/**
 * `fleet release verify [VERSION]` (docs/releases.md, contract §1.8 "reconstructable from a
 * commit", checked rather than trusted): rebuilds the pinned artifact from what its build record
 * names — the checkout at that commit, clean, and the plugins fleet.yaml pins — and compares the
 * bytes with the pin. With `--restore` a missing or damaged store file is replaced by the
 * rebuild, once it has proven byte-identical: how a clone without the store gets its artifacts.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@fleet/core';
import { readTgz } from '@fleet/controller';
import { npmIntegrity, type ShippedNode } from './node-binary.js';
import { writeStore } from './store.js';

export interface VerifyOptions {
  readonly root: string;
  readonly checkout: string;
  /** Default: fleet.yaml's canonicalVersion. */
  readonly version?: string;
  readonly restore: boolean;
  readonly progress: (line: string) => void;
}

export interface VerifyResult {
  readonly version: string;
  readonly sha256: string;
  readonly commit: string;
  /** The store file: `held` and matching, `missing`, or `mismatch` (not the pinned bytes). */
  readonly store: 'held' | 'missing' | 'mismatch';
  readonly restored: boolean;
  /**
   * The Node.js builds the release ships (fleet.yaml `artifacts[].node`): each store file `held`
   * (its sha256 and npm integrity those pinned) or `missing`. One holding other bytes fails.
   */
  readonly nodes: readonly {
    readonly platform: string;
    readonly version: string;
    /** The repository-relative store file. */
    readonly file: string;
    readonly store: 'held' | 'missing';
    readonly integrity?: string;
  }[];
}

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** What differs between two packed artifacts, by entry (pure); at most `limit` lines. */
export function artifactDifferences(a: Buffer, b: Buffer, limit = 10): string[] {
  const index = (gz: Buffer) =>
    new Map(readTgz(gz).map((entry) => [entry.path, `${entry.type}:${sha(entry.data)}`]));
  const left = index(a);
  const right = index(b);
  const lines: string[] = [];
  for (const [path, digest] of left) {
    if (!right.has(path)) lines.push(`only in the pinned artifact: ${path}`);
    else if (right.get(path) !== digest) lines.push(`differs: ${path}`);
  }
  for (const path of right.keys()) if (!left.has(path)) lines.push(`only in the rebuild: ${path}`);
  if (lines.length === 0)
    lines.push('the entries are equal; the archive bytes differ (headers or order)');
  return lines.length > limit
    ? [...lines.slice(0, limit), `… ${lines.length - limit} more`]
    : lines;
}

/** Who set the version of the artifact `held` (its build record), default `fleet release`. */
function versionSetBy(held: Buffer | null): string {
  if (held === null) return core.VERSION_SET_BY_RELEASE;
  try {
    const record = readTgz(held).find((entry) => entry.path === core.BUILD_RECORD_ENTRY);
    if (record === undefined) return core.VERSION_SET_BY_RELEASE;
    return (
      core.parseBuildRecord(record.data.toString('utf8'), core.BUILD_RECORD_ENTRY).versionSet?.by ??
      core.VERSION_SET_BY_RELEASE
    );
  } catch {
    return core.VERSION_SET_BY_RELEASE;
  }
}

export async function verifyRelease(options: VerifyOptions): Promise<VerifyResult> {
  const manifest = core.parseManifest(
    await readFile(join(options.root, core.MANIFEST_FILE), 'utf8'),
  );
  const version = options.version ?? manifest.canonicalVersion;
  const pin = manifest.artifacts.find((entry) => entry.version === version);
  if (pin === undefined) {
    throw new core.FleetError(
      'USAGE',
      `fleet.yaml pins no artifact for version ${version} (artifacts: ${manifest.artifacts.map((a) => a.version).join(', ') || 'none'})`,
    );
  }
  if (core.isDirtyLabel(pin.commit)) {
    throw new core.FleetError(
      'ARTIFACT_PROVENANCE',
      `${version} was built from a tree with uncommitted changes (${pin.commit}): it cannot be rebuilt from its commit`,
    );
  }
  const checkout = core.createGit(options.checkout);
  const head = (await checkout.run(['rev-parse', 'HEAD'])).stdout.trim();
  const status = (await checkout.run(['status', '--porcelain=v1'])).stdout.trim();
  if (head !== pin.commit || status !== '') {
    throw new core.FleetError(
      'PRECONDITION_FAILED',
      `rebuilding ${version} needs the fleet checkout ${options.checkout} at ${pin.commit} with a clean tree; it is at ${head}${status === '' ? '' : ' with uncommitted changes'} (git -C ${options.checkout} checkout ${pin.commit}, then npm ci && npm run build)`,
    );
  }
  const nodes = await verifyShippedNodes(options.root, version, pin.node ?? []);
  const storePath = join(options.root, pin.file);
  const held = await readFile(storePath).catch(() => null);
  const store = held === null ? 'missing' : sha(held) === pin.sha256 ? 'held' : 'mismatch';
  const from = await core.fleetCheckoutVersion(options.checkout);
  const plugins = await core.pinnedPluginTarballs(options.root, manifest);
  const scratch = await mkdtemp(join(tmpdir(), 'fleet-release-verify-'));
  let rebuilt: Buffer;
  try {
    options.progress(`rebuilding ${core.RUNTIME_PACKAGE} ${version} from ${pin.commit}…`);
    rebuilt = await readFile(await core.npmPackRuntime(options.checkout, scratch, plugins));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  // A version set after packing is set again, by whoever its build record says set it.
  if (version !== from) {
    rebuilt = core.withPackageVersion(rebuilt, from, version, versionSetBy(held));
  }
  if (sha(rebuilt) !== pin.sha256) {
    const against = store === 'held' ? (held as Buffer) : null;
    throw new core.FleetError(
      'VERIFICATION_FAILED',
      `the rebuild of ${version} from ${pin.commit} is ${sha(rebuilt).slice(0, 12)}, not the pinned ${pin.sha256.slice(0, 12)}${against === null ? '' : `: ${artifactDifferences(against, rebuilt).join('; ')}`}`,
    );
  }
  let restored = false;
  if (store !== 'held' && options.restore) {
    await writeStore(storePath, rebuilt);
    restored = true;
  }
  return { version, sha256: pin.sha256, commit: pin.commit, store, restored, nodes };
}

/**
 * The shipped Node.js tarballs in the store against their pins: a missing one is said (it is not
 * rebuilt from a commit: `npm pack node-<platform>@<version>` fetches the registry's, whose npm
 * integrity the pin names); one holding other bytes is `VERIFICATION_FAILED`.
 */
export async function verifyShippedNodes(
  root: string,
  version: string,
  pins: readonly ShippedNode[],
): Promise<VerifyResult['nodes']> {
  const out: VerifyResult['nodes'][number][] = [];
  const where = ({ platform, version, file }: ShippedNode) => ({ platform, version, file });
  for (const pin of pins) {
    const bytes = await readFile(join(root, pin.file)).catch(() => null);
    const integrity = pin.integrity === undefined ? {} : { integrity: pin.integrity };
    if (bytes === null) {
      out.push({ ...where(pin), store: 'missing', ...integrity });
      continue;
    }
    const problem =
      sha(bytes) !== pin.sha256
        ? `sha256 ${sha(bytes).slice(0, 12)}, not the pinned ${pin.sha256.slice(0, 12)}`
        : pin.integrity !== undefined && npmIntegrity(bytes) !== pin.integrity
          ? `npm integrity ${npmIntegrity(bytes).slice(0, 20)}…, not the pinned ${pin.integrity.slice(0, 20)}…`
          : null;
    if (problem !== null) {
      throw new core.FleetError(
        'VERIFICATION_FAILED',
        `${version}'s Node.js for ${pin.platform} in the store (${pin.file}) is ${problem}: remove it and fetch node-${pin.platform}@${pin.version} again`,
      );
    }
    out.push({ ...where(pin), store: 'held', ...integrity });
  }
  return out;
}
