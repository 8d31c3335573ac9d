/**
 * The Node.js a release ships for hosts without one (docs/releases.md; issue 35: a host needs sshd
 * and a user account, no Node.js where the registry ships a binary for its platform). The npm
 * registry publishes Node.js builds as packages `node-<platform>` (`package/bin/node`):
 * `fleet release --node linux-x64` packs the one of the running Node.js's major version, or takes
 * a tarball of that package already at hand (`--node linux-x64=FILE`, for a seat without the
 * registry). It is kept in the artifact store by sha256 and pinned beside the runtime.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as core from '@fleet/core';
import { readTgz } from '@fleet/controller';
import { storeFile, writeStore } from './store.js';

export interface ShippedNode {
  readonly platform: core.NodePlatform;
  readonly version: string;
  /** Repository-relative store file. */
  readonly file: string;
  readonly sha256: string;
  /** The tarball's npm integrity (SRI sha512): absent only in pins made before it was kept. */
  readonly integrity?: string;
}

/** The npm integrity of a tarball's bytes (pure): what the registry lists as `dist.integrity`. */
export function npmIntegrity(bytes: Buffer): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

export interface NodeSpec {
  readonly platform: core.NodePlatform;
  /** A tarball of `node-<platform>` at hand; absent: packed from the registry. */
  readonly file?: string;
}

/** `PLATFORM` or `PLATFORM=FILE` (pure); `USAGE` for a platform the registry ships no build for. */
export function parseNodeSpec(text: string): NodeSpec {
  const at = text.indexOf('=');
  const platform = at === -1 ? text : text.slice(0, at);
  if (!(core.NODE_PLATFORMS as readonly string[]).includes(platform)) {
    throw new core.FleetError(
      'USAGE',
      `--node ${JSON.stringify(text)}: the npm registry ships Node.js as node-<platform> for ${core.NODE_PLATFORMS.join(', ')}`,
    );
  }
  const file = at === -1 ? undefined : text.slice(at + 1);
  if (file === '') throw new core.FleetError('USAGE', `--node ${text}: no file after =`);
  return { platform: platform as core.NodePlatform, ...(file === undefined ? {} : { file }) };
}

/** The platform of a host as `uname -s` and `uname -m` name it, or `null` (pure). */
export function nodePlatformOf(os: string, arch: string): core.NodePlatform | null {
  const cpu =
    arch === 'x86_64' || arch === 'amd64' ? 'x64' : /^(aarch64|arm64)$/.test(arch) ? 'arm64' : null;
  if (cpu === null) return null;
  if (os === 'Linux') return `linux-${cpu}`;
  if (os === 'Darwin') return `darwin-${cpu}`;
  return null;
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
export function samePins(earlier: readonly ShippedNode[], added: readonly ShippedNode[]): boolean {
  return added.every((node) =>
    earlier.some(
      (pin) =>
        pin.platform === node.platform &&
        pin.sha256 === node.sha256 &&
        pin.integrity === node.integrity,
    ),
  );
}

/** Puts the Node.js of `spec` into the store; what to pin. */
export async function storeNode(
  root: string,
  spec: NodeSpec,
  scratch: string,
  progress: (line: string) => void,
): Promise<ShippedNode> {
  const name = `node-${spec.platform}`;
  let tarball = spec.file;
  /** What the registry said the tarball's integrity is, when it came from the registry. */
  let registryIntegrity: string | undefined;
  if (tarball === undefined) {
    const major = process.versions.node.split('.')[0] as string;
    progress(
      `packing Node.js ${major} for ${spec.platform} from the npm registry (${name}@${major})…`,
    );
    const { stdout } = await promisify(execFile)(
      'npm',
      ['pack', '--json', '--pack-destination', scratch, `${name}@${major}`],
      { maxBuffer: 16 * 1024 * 1024 },
    ).catch((error: unknown) => {
      throw new core.FleetError(
        'ACTION_FAILED',
        `npm pack ${name}@${major} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)} (offline? give --node ${spec.platform}=FILE)`,
      );
    });
    const [report] = JSON.parse(stdout) as { filename?: string; integrity?: unknown }[];
    if (typeof report?.filename !== 'string') {
      throw new core.FleetError('ACTION_FAILED', `npm pack ${name} printed no tarball`);
    }
    tarball = join(scratch, report.filename);
    if (typeof report.integrity === 'string') registryIntegrity = report.integrity;
  }
  const bytes = await readFile(tarball).catch((error: unknown) => {
    throw new core.FleetError(
      'USAGE',
      `--node ${spec.platform}=${tarball}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  });
  const entries = readTgz(bytes);
  const pkg = entries.find((entry) => entry.path === 'package/package.json');
  const parsed =
    pkg === undefined
      ? null
      : (JSON.parse(pkg.data.toString('utf8')) as { name?: unknown; version?: unknown });
  if (
    parsed?.name !== name ||
    typeof parsed.version !== 'string' ||
    !entries.some((entry) => /^package\/(bin\/node|node\.exe)$/.test(entry.path))
  ) {
    throw new core.FleetError(
      'USAGE',
      `${tarball} is not the npm package ${name} (its package.json names ${String(parsed?.name)}, or it holds no Node.js binary)`,
    );
  }
  const integrity = npmIntegrity(bytes);
  // npm checked the download against the registry's integrity; the bytes read back must be those.
  if (registryIntegrity !== undefined && registryIntegrity !== integrity) {
    throw new core.FleetError(
      'VERIFICATION_FAILED',
      `${tarball}: its bytes are ${integrity.slice(0, 20)}…, not the registry's ${registryIntegrity.slice(0, 20)}… for ${name}@${parsed.version}`,
    );
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const file = storeFile(sha256);
  await writeStore(join(root, file), bytes);
  return { platform: spec.platform, version: parsed.version, file, sha256, integrity };
}
