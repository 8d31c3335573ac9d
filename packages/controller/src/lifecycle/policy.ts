/**
 * The node's local bootstrap policy (contract §12: apply needs "the host's local bootstrap policy
 * allowing it"): `~/.local/state/fleet/bootstrap-policy.json`, written by whoever administers the
 * node — never sent by the operator, never in a bundle. No file, or anything unreadable, denies.
 *
 *   { "version": 1, "bootstrap": "allow", "supervisors": ["systemd-user"] }
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { FleetError, parseStrictJson } from '@fleet/core';
import { statePaths } from '../state-paths.js';

export const BOOTSTRAP_POLICY_FILE = 'bootstrap-policy.json';

export const bootstrapPolicySchema = z.strictObject({
  version: z.literal(1),
  bootstrap: z.enum(['allow', 'deny']),
  /** The supervisors a bootstrap may install; absent: any the node has an adapter for. */
  supervisors: z.array(z.string().min(1)).optional(),
});
export type BootstrapPolicy = z.infer<typeof bootstrapPolicySchema>;

export function bootstrapPolicyPath(home: string): string {
  return join(statePaths(home).root, BOOTSTRAP_POLICY_FILE);
}

/** Throws `BOOTSTRAP_REFUSED` unless the node's policy allows a bootstrap with `supervisor`. */
export async function requireBootstrapAllowed(home: string, supervisor: string): Promise<void> {
  const path = bootstrapPolicyPath(home);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      code === 'ENOENT'
        ? 'this node has no bootstrap policy: bootstrap is denied (an administrator of the node writes ~/.local/state/fleet/bootstrap-policy.json)'
        : `this node's bootstrap policy is unreadable (${String(code)}): bootstrap is denied`,
    );
  }
  let policy: BootstrapPolicy;
  try {
    policy = bootstrapPolicySchema.parse(
      parseStrictJson(text, BOOTSTRAP_POLICY_FILE, 'BOOTSTRAP_REFUSED'),
    );
  } catch {
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      `this node's ${BOOTSTRAP_POLICY_FILE} is not a valid policy: bootstrap is denied`,
    );
  }
  if (policy.bootstrap !== 'allow') {
    throw new FleetError('BOOTSTRAP_REFUSED', "this node's bootstrap policy denies bootstrap");
  }
  if (policy.supervisors !== undefined && !policy.supervisors.includes(supervisor)) {
    throw new FleetError(
      'BOOTSTRAP_REFUSED',
      `this node's bootstrap policy does not allow the ${supervisor} supervisor (allowed: ${policy.supervisors.join(', ') || 'none'})`,
    );
  }
}
