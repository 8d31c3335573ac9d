/**
 * `fleet lab up`'s node homes (up.ts): the operator's tokens issued into each new node's store, the
 * lab's release signing key, and each node's policy — written before any controller starts.
 */
import { mkdir } from 'node:fs/promises';
import type { Credentials } from '@fleet/core';
import * as core from '@fleet/core';
import { nodeLayout } from './layout.js';
import { syncLabDevPlugins } from './dev-plugins.js';
import { writeLabNodePolicy } from './policy.js';
import { labUnitName } from './systemd.js';
import { issueLabTokens, writeCredentials } from './tokens.js';
import type { LabUpPlan } from './up-plan.js';

/** What the operator holds for the lab's nodes. */
export interface LabKeys {
  readonly credentials: Credentials;
  /** The lab's release signing key (`ssh-ed25519 AAAA…`), which its nodes trust. */
  readonly signingKey: string;
}

export async function prepareLabNodes(
  plan: LabUpPlan,
  progress: (line: string) => void,
): Promise<LabKeys> {
  const credentials = await labCredentials(plan, progress);
  // The lab's release signing key (docs/releases.md): lab build signs with it, its nodes trust it,
  // so runtime changes on a lab take the real, signed path.
  const signing = await core.signingKey(core.defaultSigningKeyFile(plan.lab.credentials), {
    create: true,
  });
  await writeLabNodePolicies(plan, signing.publicKey);
  const { devPlugins } = plan;
  if (devPlugins.length > 0) {
    progress(
      `serving the linked plugins from their folders (lab only): ${devPlugins.map((p) => `${p.name} (${p.domains.join(', ')})`).join(', ')}`,
    );
  }
  return { credentials, signingKey: signing.publicKey };
}

/** A stopped lab's credentials; for a new lab, a token issued into each node's store. */
async function labCredentials(
  plan: LabUpPlan,
  progress: (line: string) => void,
): Promise<Credentials> {
  if (plan.previous) return core.loadCredentials(plan.lab.credentials);
  for (const home of plan.homes.values()) await mkdir(home, { recursive: true });
  progress(`issuing a token into each node's store (${plan.hosts.length})`);
  const credentials = await issueLabTokens(plan.homes);
  await writeCredentials(plan.lab.credentials, credentials);
  return credentials;
}

/**
 * Each node's own policy (contract §5.1): the three config domains and files, bootstrap through
 * the supervisor that runs it (a lab is a sandbox, contract §12), that supervisor, the coupled
 * actions of --node-actions only (read by the plan, before anything was written).
 */
async function writeLabNodePolicies(plan: LabUpPlan, signingKey: string): Promise<void> {
  const { lab, devPlugins } = plan;
  for (const host of plan.hosts) {
    const node = nodeLayout(lab, host);
    await writeLabNodePolicy(
      node.home,
      plan.supervisor === 'systemd-user'
        ? { kind: 'systemd-user', unit: labUnitName(lab.dir, host) }
        : { kind: 'lab', socket: node.socket },
      [signingKey],
      devPlugins,
      plan.nodeActions,
    );
    if (plan.previous) await syncLabDevPlugins(node.home, devPlugins);
  }
}
