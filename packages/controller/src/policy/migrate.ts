/**
 * The one-time migration of the old node-local bootstrap policy (contract §12):
 * `~/.local/state/fleet/bootstrap-policy.json` = `{ "version": 1, "bootstrap": "allow"|"deny",
 * "supervisors"?: [...] }` becomes part of the node policy, `~/.config/fleet/node-policy.yaml`.
 *
 * It runs only when the node has the old file and no node policy. It is safe: the new policy
 * serves exactly the domains the node served before (every domain of its plugins, at their
 * declared paths), runs no action (the old node ran whatever argv a request carried — that is
 * what this removes), denies unattended installs, and keeps the old bootstrap decision. The old
 * file is renamed `bootstrap-policy.json.migrated` so it is read once; the controller records the
 * migration in the audit log. An old file that does not parse is not guessed at: the node does
 * not start, and the error names both files and the fix.
 */
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from '@fleet/core/zod';
import {
  FleetError,
  defaultNodePolicy,
  nodePolicyFile,
  nodePolicyFix,
  parseStrictJson,
  SUPERVISORS,
  type Registry,
} from '@fleet/core/node';
import { errnoOf } from '../fs/errors.js';
import { statePaths } from '../state-paths.js';
import { writeNodePolicy } from './file.js';

export const OLD_BOOTSTRAP_POLICY_FILE = 'bootstrap-policy.json';

const oldPolicySchema = z.strictObject({
  version: z.literal(1),
  bootstrap: z.enum(['allow', 'deny']),
  supervisors: z.array(z.string().min(1)).optional(),
});

/** The old file of `home`. */
export function oldBootstrapPolicyPath(home: string): string {
  return join(statePaths(home).root, OLD_BOOTSTRAP_POLICY_FILE);
}

/**
 * Migrates the old bootstrap policy when it is the node's only policy. Returns what was done (for
 * the audit log), or `null` when there was nothing to migrate.
 */
export async function migrateBootstrapPolicy(
  home: string,
  registry: Pick<Registry, 'domains'>,
): Promise<string | null> {
  const policyFile = nodePolicyFile(home);
  const oldFile = oldBootstrapPolicyPath(home);
  let text: string;
  try {
    text = await readFile(oldFile, 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  }
  try {
    await readFile(policyFile);
    return null; // a node policy exists: it governs; the old file is not read
  } catch (error) {
    if (errnoOf(error) !== 'ENOENT') return null; // let the policy reader say what is wrong
  }
  let old: z.infer<typeof oldPolicySchema>;
  try {
    old = oldPolicySchema.parse(parseStrictJson(text, oldFile, 'NODE_POLICY_INVALID'));
  } catch {
    throw new FleetError(
      'NODE_POLICY_MISSING',
      `this node has no node policy (${policyFile}) and its old bootstrap policy ${oldFile} is not valid: nothing migrated, the node does not start`,
      { suggestions: [`${nodePolicyFix(home)}, then remove ${oldFile}`] },
    );
  }
  const domains = registry.domains().map((entry) => entry.descriptor.domain);
  // A supervisor name no adapter has could never have matched: it is not carried over.
  const known = old.supervisors?.filter((s) => SUPERVISORS.includes(s as never) && s !== 'none');
  const bootstrap = {
    allow: old.bootstrap === 'allow',
    ...(known === undefined ? {} : { supervisors: known }),
  };
  await writeNodePolicy(home, defaultNodePolicy(domains, { bootstrap }));
  await rename(oldFile, `${oldFile}.migrated`);
  return `migrated ${oldFile} into ${policyFile}: serving ${domains.join(', ') || 'no domain'} at their declared paths, no actions, unattended denied, bootstrap ${bootstrap.allow ? 'allowed' : 'denied'}${known ? ` (supervisors: ${known.join(', ') || 'none'})` : ''}; the old file is kept as ${OLD_BOOTSTRAP_POLICY_FILE}.migrated`;
}
