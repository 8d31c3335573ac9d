/**
 * The Node.js fleet runs with on a host being added (`fleet host add --node`, contract §12.1):
 * the host's own, or the one the pinned release ships for its platform — sent to the host's
 * artifact cache, checked by its sha256 there and unpacked beside the other Node.js versions.
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as core from '@fleet/core';
import type { FleetManifest } from '@fleet/core';
import { nodePlatformOf } from '../release/node-binary.js';
import { plannedPlatformOf } from './platform.js';
import { ARTIFACT_CACHE, hostNodeUsable, type HostFacts } from './probe.js';
import { must, type SeatOptions } from './remote.js';
import { shellQuote, type SshSession } from './ssh-session.js';

export interface ShippedNodeOnSeat {
  readonly platform: string;
  readonly version: string;
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
}

export /**
 * The Node.js the pinned release ships for the host's platform, if any. Its file must be in this
 * seat's store (a clone without it: `fleet release --confirm --node PLATFORM` again).
 */
function shippedNodeFor(
  root: string,
  manifest: FleetManifest,
  sha256: string,
  facts: HostFacts,
): ShippedNodeOnSeat | null {
  const platform = nodePlatformOf(facts.os, facts.arch);
  const pin = manifest.artifacts
    .find((entry) => entry.sha256 === sha256)
    ?.node?.find((node) => node.platform === platform);
  if (pin === undefined) return null;
  let bytes: number;
  try {
    bytes = statSync(join(root, pin.file)).size;
  } catch {
    throw new core.FleetError(
      'USAGE',
      `the release's Node.js for ${pin.platform} (${pin.file}) is not in this seat's store: fleet release --confirm --node ${pin.platform} puts it back; nothing was sent`,
    );
  }
  return { ...pin, bytes };
}

/** Which Node.js will run fleet on the host (pure). */
export function chooseNode(
  wanted: 'auto' | 'host' | 'release',
  facts: HostFacts,
  shipped: { readonly platform: string } | null,
): 'host' | 'release' {
  if (wanted === 'host') return 'host';
  if (wanted === 'release') return 'release';
  return hostNodeUsable(facts) || shipped === null ? 'host' : 'release';
}

export /**
 * Puts the release's Node.js on the host: the `node-<platform>` tarball to
 * `~/.cache/fleet/artifacts/<sha256>.tgz` (unless there, checked by its sha256 on the host), its
 * `package/bin/node` unpacked to `~/.local/share/fleet/node/<version>-<platform>/` (unless
 * there), and run once; returns its path.
 */
async function installShippedNode(
  session: SshSession,
  facts: HostFacts,
  shipped: ShippedNodeOnSeat,
  upload: boolean,
  options: SeatOptions,
  name: string,
): Promise<string> {
  const cached = `${facts.home}/${ARTIFACT_CACHE}/${shipped.sha256}.tgz`;
  const nodeDir = plannedPlatformOf(facts.os).nodeDir;
  const dir = `${facts.home}/${nodeDir}/${shipped.version}-${shipped.platform}`;
  if (upload) {
    const local = join(options.root, shipped.file);
    options.progress(`${name}: sending Node.js ${shipped.version} for ${shipped.platform}…`);
    const part = `${cached}.${randomBytes(4).toString('hex')}.part`;
    await must(
      session,
      `mkdir -p ${shellQuote(dirname(cached))} && chmod 700 ${shellQuote(dirname(cached))}`,
    );
    await session.put(local, part);
    await must(session, `mv -f ${shellQuote(part)} ${shellQuote(cached)}`);
  }
  const node = `${dir}/package/bin/node`;
  const temp = `${dir}.${randomBytes(4).toString('hex')}.tmp`;
  const version = await must(
    session,
    [
      `if [ ! -x ${shellQuote(node)} ]; then`,
      `  [ "$({ sha256sum 2>/dev/null || shasum -a 256; } < ${shellQuote(cached)} | cut -d' ' -f1)" = ${shipped.sha256} ] || { echo "the Node.js tarball is not the one pinned" >&2; exit 1; }`,
      `  mkdir -p ${shellQuote(temp)} && tar -xzf ${shellQuote(cached)} -C ${shellQuote(temp)} package/bin/node && rm -rf ${shellQuote(dir)} && mv ${shellQuote(temp)} ${shellQuote(dir)}`,
      'fi',
      `${shellQuote(node)} --version`,
    ].join('\n'),
  );
  options.progress(`${name}: Node.js ${version.trim()} at ${node}`);
  return node;
}
