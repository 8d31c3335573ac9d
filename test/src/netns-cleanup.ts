/**
 * Taking a network-namespace host down to nothing (netns-host.ts: "Everything is removed"): from
 * its claim's record, its sshd, every process left in its namespace (asked, then killed), its
 * veth, its netns and the claim itself — for a host a suite stops, for what the exit handler
 * finds, and for the claims of test processes that are gone. Synchronous, as the exit handler
 * needs; apart from the making (netns-network.ts) because it must work from a record alone.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { NETNS_STATE_DIR, claimDir, readClaim, type ClaimRecord } from './netns-claims.js';
import { alive, signal, sleepSync } from './processes.js';

function ipQuiet(args: readonly string[]): void {
  spawnSync('ip', [...args], { stdio: 'ignore' });
}

/** Removes what a claim holds: sshd, every process left in the namespace, the veth, the netns. */
export function releaseClaim(record: ClaimRecord): void {
  if (record.sshdPid !== null && alive(record.sshdPid)) {
    signal(record.sshdPid, 'SIGTERM');
    for (let waited = 0; waited < 3_000 && alive(record.sshdPid); waited += 50) sleepSync(50);
    if (alive(record.sshdPid)) signal(record.sshdPid, 'SIGKILL');
  }
  // Whatever is left in the namespace (a killed test process's manager, units, holder): asked to
  // stop first, then killed.
  const left = () =>
    (spawnSync('ip', ['netns', 'pids', record.namespace], { encoding: 'utf8' }).stdout ?? '')
      .split(/\s+/)
      .filter((pid) => /^\d+$/.test(pid))
      .map(Number);
  for (const pid of left()) signal(pid, 'SIGTERM');
  for (let waited = 0; waited < 3_000 && left().length > 0; waited += 100) sleepSync(100);
  for (let round = 0; round < 3; round += 1) {
    const pids = left();
    if (pids.length === 0) break;
    for (const pid of pids) signal(pid, 'SIGKILL');
    sleepSync(100);
  }
  ipQuiet(['link', 'del', record.veth]);
  ipQuiet(['netns', 'del', record.namespace]);
  rmSync(claimDir(record.subnet), { recursive: true, force: true });
}

/** Releases the claims of test processes that are gone (and unfinished claims older than 60 s). */
export function releaseStaleClaims(): void {
  for (const name of readdirSync(NETNS_STATE_DIR)) {
    if (!/^\d+$/.test(name)) continue;
    const subnet = Number(name);
    const record = readClaim(subnet);
    if (record === null) {
      let age = 0;
      try {
        age = Date.now() - statSync(claimDir(subnet)).mtimeMs;
      } catch {
        continue;
      }
      if (age > 60_000) rmSync(claimDir(subnet), { recursive: true, force: true });
      continue;
    }
    if (!alive(record.ownerPid)) releaseClaim(record);
  }
}
