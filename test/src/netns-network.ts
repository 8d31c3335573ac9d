/**
 * A network-namespace host's two namespaces (netns-host.ts, steps 1 and 2): the network one — `ip
 * netns add`, the veth pair with the root side's and the host's addresses, `lo` up — and the
 * mount one, held by a `sleep` inside the netns, whose only difference from the machine's is a
 * `/run/systemd/system` marker of its own. Both are made for a claim (netns-claims.ts); they are
 * taken down from its record (netns-cleanup.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_TOOLS } from '@fleet/testkit';
import { SUBNET_PREFIX, claimDir, type ClaimRecord } from './netns-claims.js';
import { exited } from './processes.js';

/**
 * The holder of a host's mount namespace (run by `unshare --mount --propagation slave` inside the
 * host's netns): `/run/systemd` becomes a tmpfs showing the machine's entries (bind mounts from
 * `$1`, where the machine's own is bound first) plus `system/`, the marker systemd and
 * `sd_booted()` check — so on the host `systemctl --user is-system-running` says `running` as on
 * a workstation, while the machine's /run (which apt checks) stays as it was (`/run/systemd`
 * itself is made there if missing: apt looks only for `system/`). Then it sleeps until the host
 * stops.
 */
const HOLDER_SCRIPT = `set -e
saved=$1
mkdir -p "$saved" /run/systemd
mount --bind /run/systemd "$saved"
mount -t tmpfs -o mode=0755 fleet-host-run-systemd /run/systemd
for e in "$saved"/* "$saved"/.[!.]*; do
  [ -e "$e" ] || [ -L "$e" ] || continue
  n=\${e##*/}
  if [ -L "$e" ]; then cp -P "$e" "/run/systemd/$n"; continue; fi
  if [ -d "$e" ]; then mkdir "/run/systemd/$n"; else : > "/run/systemd/$n"; fi
  mount --bind "$e" "/run/systemd/$n"
done
mkdir -p /run/systemd/system
exec sleep infinity
`;

/** Runs `ip ARGS`; throws with its stderr when it fails. */
function ip(args: readonly string[]): string {
  const done = spawnSync('ip', [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (done.error) throw done.error;
  if (done.status !== 0) {
    throw Object.assign(new Error(`ip ${args.join(' ')}: ${done.stderr.trim()}`), {
      stderr: done.stderr,
    });
  }
  return done.stdout;
}

/** Sets up the namespace and its veth for a claim (throws with ip's words when refused). */
export function makeNetwork(claim: ClaimRecord): void {
  const { namespace, veth, subnet } = claim;
  ip(['netns', 'add', namespace]);
  ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace]);
  ip(['addr', 'add', `${SUBNET_PREFIX}.${subnet}.1/24`, 'dev', veth]);
  ip(['link', 'set', veth, 'up']);
  ip(['-n', namespace, 'addr', 'add', `${SUBNET_PREFIX}.${subnet}.2/24`, 'dev', 'eth0']);
  ip(['-n', namespace, 'link', 'set', 'eth0', 'up']);
  ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
}

/** Starts the namespace's holder (see HOLDER_SCRIPT); returns its pid once the marker shows. */
export async function startHolder(claim: ClaimRecord): Promise<number> {
  const child = spawn(
    'nsenter',
    [
      `--net=/run/netns/${claim.namespace}`,
      '--',
      SYSTEM_TOOLS.unshare.command,
      '--mount',
      '--propagation',
      'slave',
      '--',
      'sh',
      '-c',
      HOLDER_SCRIPT,
      'sh',
      join(claimDir(claim.subnet), 'machine-run-systemd'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  child.unref();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let early: Error | undefined;
  child.once('error', (error) => (early = error));
  child.once('exit', (code, sig) => (early ??= new Error(`exited (${code ?? sig})`)));
  const pid = child.pid;
  const until = Date.now() + 10_000;
  // nsenter, unshare and sh exec one another: the pid is the holder's all along.
  while (pid === undefined || !existsSync(`/proc/${pid}/root/run/systemd/system`)) {
    if (early || Date.now() > until) {
      if (!exited(child)) child.kill('SIGKILL');
      throw new Error(
        `the mount namespace of ${claim.namespace} (${early?.message ?? 'timeout'}): ${stderr}`,
      );
    }
    await sleep(20);
  }
  child.stderr?.destroy();
  return pid;
}
