/**
 * The subnet claims of the network-namespace hosts (netns-host.ts, step 1): each host's `<n>` of
 * `10.231.<n>.0/24` is claimed machine-wide by making `/run/fleet-netns-test/<n>` atomically, so
 * concurrent test processes never share a subnet, and the claim's record names what the host is
 * made of (namespace, veth, sshd) for whoever has to take it down (netns-cleanup.ts). The claim's
 * directory also holds the host's sshd files (netns-sshd.ts) and its mount holder's bind point.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readText } from './processes.js';

/** Claims of subnets (`<n>/`), each with its record and its sshd's files (root-only). */
export const NETNS_STATE_DIR = '/run/fleet-netns-test';
/** Each host's subnet is `10.231.<n>.0/24`. */
export const SUBNET_PREFIX = '10.231';

/** What a claim records, for the cleanup of a killed test process's hosts. */
export interface ClaimRecord {
  readonly ownerPid: number;
  readonly subnet: number;
  readonly namespace: string;
  readonly veth: string;
  readonly sshdPid: number | null;
}

// ---- claims ---------------------------------------------------------------------------------

export const claimDir = (subnet: number) => join(NETNS_STATE_DIR, String(subnet));
const claimRecordPath = (subnet: number) => join(claimDir(subnet), 'claim.json');

export function readClaim(subnet: number): ClaimRecord | null {
  const text = readText(claimRecordPath(subnet));
  if (text === null) return null;
  try {
    return JSON.parse(text) as ClaimRecord;
  } catch {
    return null;
  }
}

export function writeClaim(record: ClaimRecord): void {
  writeFileSync(claimRecordPath(record.subnet), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** Subnets already on an interface of the root namespace (not ours to take). */
function subnetsInUse(): Set<number> {
  const used = new Set<number>();
  const text = spawnSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout ?? '';
  for (const match of text.matchAll(/inet 10\.231\.(\d+)\./g)) used.add(Number(match[1]));
  return used;
}

/** Claims a free subnet number (1…254) for `namespace`; its record is written at once. */
export function claimSubnet(namespace: string): ClaimRecord {
  const used = subnetsInUse();
  const start = 1 + Math.floor(Math.random() * 254);
  for (let i = 0; i < 254; i += 1) {
    const subnet = 1 + ((start - 1 + i) % 254);
    if (used.has(subnet)) continue;
    try {
      mkdirSync(claimDir(subnet), { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    const record: ClaimRecord = {
      ownerPid: process.pid,
      subnet,
      namespace,
      veth: `fleet${subnet}`,
      sshdPid: null,
    };
    writeClaim(record);
    return record;
  }
  throw new Error(`no free subnet ${SUBNET_PREFIX}.<n>.0/24 (n = 1…254) to claim`);
}
