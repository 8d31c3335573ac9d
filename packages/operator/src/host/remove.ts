/**
 * `fleet host remove NAME --confirm` (contract §12.1): over the same SSH path as `host add`, with
 * the host key fleet.yaml pins, it stops and disables the controller's unit (on a Mac: boots the
 * LaunchAgent out and moves its plist out of `~/Library/LaunchAgents/`, so no login loads it
 * again — launchd has no `disable` that survives a plist left in place) and revokes every
 * token issued to the operator (`operator-NAME`); then the host leaves fleet.yaml, hosts/ and the
 * credentials file. The managed files, the node's state, its audit log and its generations stay
 * on the host: removing a host from the fleet is not wiping a machine.
 */
import * as core from '@fleet/core';
import type { Registry } from '@fleet/core';
import { loadFleetContext } from '../config/context.js';
import { commitHostRemoval } from './fleet-files.js';
import { LAUNCHD_LABEL, plannedPlatformOf, type HostPlatform } from './platform.js';
import { CONTROLLER_UNIT, parseProbe, probeScript } from './probe.js';
import { openSshSession, shellQuote } from './ssh-session.js';

export interface RemoveHostOptions {
  readonly root: string;
  readonly registry: Registry;
  readonly name: string;
  readonly identity?: string;
  readonly confirm: boolean;
  readonly progress: (line: string) => void;
}

export interface RemoveHostResult {
  readonly host: string;
  readonly outcome: 'planned' | 'removed';
  readonly revoked: readonly string[];
  readonly commit: string | null;
}

export async function removeHost(options: RemoveHostOptions): Promise<RemoveHostResult> {
  const { name } = options;
  const context = await loadFleetContext({
    root: options.root,
    registry: options.registry,
    domains: [],
    needsCredentials: false,
  });
  const entry = core.hostEntry(context.repo, name);
  context.close();
  if (!options.confirm) return { host: name, outcome: 'planned', revoked: [], commit: null };
  if (entry.ssh === undefined) {
    throw new core.FleetError(
      'USAGE',
      `fleet.yaml has no ssh for ${name}: host remove stops its controller over SSH (add hosts.${name}.ssh, or remove the entry by hand)`,
    );
  }
  const session = await openSshSession({
    address: { user: entry.ssh.user, host: entry.ssh.host, port: entry.ssh.port },
    name,
    pin: { line: entry.ssh.hostKey },
    ...(options.identity === undefined ? {} : { identity: options.identity }),
  });
  const revoked: string[] = [];
  try {
    const facts = parseProbe((await session.run(probeScript('127.0.0.1', 0))).stdout);
    const host = plannedPlatformOf(facts.os);
    options.progress(
      `${name}: stopping ${host.supervisor === 'launchd' ? LAUNCHD_LABEL : CONTROLLER_UNIT}…`,
    );
    await session.run(stopCommand(host, facts.uid));
    const cli = `${facts.home}/${host.runtimeDir}/current/package/bin/run.js`;
    if (facts.node !== null) {
      const fleet = `${shellQuote(facts.node)} ${shellQuote(cli)}`;
      const listed = await session.run(
        `${fleet} token list --home ${shellQuote(facts.home)} --json`,
      );
      const tokens = listed.code === 0 ? tokensOf(listed.stdout) : [];
      for (const token of tokens) {
        if (token.client !== `operator-${name}` || token.state === 'revoked') continue;
        const ran = await session.run(
          `${fleet} token revoke ${shellQuote(token.id)} --home ${shellQuote(facts.home)} --json`,
        );
        if (ran.code === 0) revoked.push(token.id);
      }
    }
  } finally {
    session.close();
  }
  options.progress(
    `${name}: ${revoked.length} operator token${revoked.length === 1 ? '' : 's'} revoked`,
  );
  const commit = await commitHostRemoval(options.root, name);
  const credentialsPath = core.defaultCredentialsPath(process.env);
  const update = await core.prepareCredentialsUpdate(credentialsPath).catch(() => null);
  if (update !== null) {
    await update.commit((current) => {
      const hosts = { ...current.hosts };
      delete hosts[name];
      return { ...current, hosts };
    });
  }
  return { host: name, outcome: 'removed', revoked, commit };
}

/**
 * Stops the controller for good (pure): `systemctl --user disable --now` under systemd; under
 * launchd `bootout` (launchctl(1): stops and unloads the service) and the plist moved to
 * `~/Library/Application Support/fleet/removed/`, kept, where no login loads it.
 */
export function stopCommand(host: HostPlatform, uid: number | null): string {
  if (host.supervisor !== 'launchd')
    return `systemctl --user disable --now ${CONTROLLER_UNIT} 2>&1`;
  const plist = `"$HOME/Library/LaunchAgents/${LAUNCHD_LABEL}.plist"`;
  const kept = '"$HOME/Library/Application Support/fleet/removed"';
  return [
    `launchctl bootout gui/${uid ?? '$(id -u)'}/${LAUNCHD_LABEL} 2>&1`,
    `if [ -f ${plist} ]; then mkdir -p ${kept} && mv -f ${plist} ${kept}/; fi`,
  ].join('; ');
}

function tokensOf(stdout: string): { id: string; client: string; state: string }[] {
  try {
    const parsed = JSON.parse(stdout) as { tokens?: unknown };
    return Array.isArray(parsed.tokens)
      ? (parsed.tokens as { id: string; client: string; state: string }[])
      : [];
  } catch {
    return [];
  }
}
