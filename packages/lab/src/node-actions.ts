/**
 * A lab's coupled actions (contract §13, docs/plugin-authoring.md "A coupled action on the lab
 * node"): `fleet lab up --node-actions FILE` names, per domain, the node policy actions a lab node
 * defines (`domains.<d>.actions.<id>`, the shape docs/node-policy.md gives them: argv, `~` the
 * node's home, `{file}` a validate action's staged file) and the roles the lab's fleet.yaml asks
 * for them (`validate`, `reload`, `restart`: action ids). Policy changes travel over SSH only
 * (contract §5.1): on a lab, that is the lab writing its own nodes' policies when it makes them —
 * so a new lab only; a stopped lab brought up again keeps what its policies say by then.
 *
 * ```yaml
 * npmrc:
 *   actions:
 *     npmrc-check: { argv: [/usr/bin/git, config, --file, '{file}', --list] }
 *   validate: npmrc-check
 * ```
 */
import { readFile } from 'node:fs/promises';
import {
  FleetError,
  actionIdSchema,
  parseYaml,
  policyActionSchema,
  zodProblems,
  type NodePolicyInput,
} from '@fleet/core';
import * as z from '@fleet/core/zod';

/** The roles fleet.yaml may give a domain's node policy actions, in manifest order. */
export const LAB_ACTION_ROLES = ['reload', 'validate', 'restart'] as const;

const domainActionsSchema = z.strictObject({
  /** The node policy's actions of the domain, by id (docs/node-policy.md). */
  actions: z.record(actionIdSchema, policyActionSchema),
  reload: actionIdSchema.optional(),
  validate: actionIdSchema.optional(),
  restart: actionIdSchema.optional(),
});

/** `--node-actions FILE`: per domain, its node policy actions and the roles fleet.yaml names. */
export const labNodeActionsSchema = z.record(
  z.string().regex(/^[a-z][a-z0-9-]*$/, 'must be a domain name'),
  domainActionsSchema,
);

export type LabNodeActions = z.infer<typeof labNodeActionsSchema>;
export type LabNodeActionsInput = z.input<typeof labNodeActionsSchema>;

/**
 * Problems of `actions` for a lab serving `served` (pure): a domain it does not serve, a role
 * naming an id the domain's actions do not define.
 */
export function nodeActionsProblems(
  actions: LabNodeActions,
  served: readonly string[],
  file: string,
): string[] {
  const problems: string[] = [];
  for (const [domain, entry] of Object.entries(actions)) {
    if (!served.includes(domain)) {
      problems.push(
        `${file}: ${domain}: the lab serves no domain ${domain} (it serves ${served.join(', ')}; a plugin's domain after fleet plugins link)`,
      );
    }
    for (const role of LAB_ACTION_ROLES) {
      const id = entry[role];
      if (id !== undefined && !Object.hasOwn(entry.actions, id)) {
        problems.push(
          `${file}: ${domain}.${role}: names ${id}, an action id ${domain}.actions does not define`,
        );
      }
    }
  }
  return problems;
}

/** `--node-actions` on a stopped lab: its nodes' policies are written (`USAGE`). */
export function refuseNodeActionsOnStoppedLab(): never {
  throw new FleetError(
    'USAGE',
    "--node-actions applies to a new lab: a stopped lab's nodes keep the policies they have",
    { suggestions: ["edit the nodes' policies there, or bring up a new lab in another --dir"] },
  );
}

/** Reads and checks `--node-actions FILE` (YAML or JSON): `USAGE` with every problem. */
export async function readNodeActionsFile(
  file: string,
  served: readonly string[],
): Promise<LabNodeActions> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new FleetError('USAGE', `--node-actions ${file}: ${(error as Error).message}`);
  }
  const parsed = parseYaml(text, file, 'USAGE');
  const result = labNodeActionsSchema.safeParse(parsed.value ?? {});
  if (!result.success) {
    throw new FleetError('USAGE', `--node-actions ${file} is not a lab's node actions`, {
      problems: zodProblems(result.error, file, parsed.lineOf),
    });
  }
  const problems = nodeActionsProblems(result.data, served, file);
  if (problems.length > 0) {
    throw new FleetError('USAGE', problems.join('; '));
  }
  return result.data;
}

/** `policy` with each domain's actions of `nodeActions` (pure; the domain must be served). */
export function withNodeActions(
  policy: NodePolicyInput,
  nodeActions: LabNodeActions,
): NodePolicyInput {
  const domains = { ...policy.domains };
  for (const [domain, entry] of Object.entries(nodeActions)) {
    // A domain's section is `unknown` on input (YAML null means `{}`): the lab's are objects.
    const section = (domains[domain] ?? {}) as Record<string, unknown>;
    domains[domain] = { ...section, actions: entry.actions };
  }
  return { ...policy, domains };
}

/** The roles fleet.yaml gives `domain` (`, validate: npmrc-check`), or '' (pure). */
export function manifestRoles(nodeActions: LabNodeActions | undefined, domain: string): string {
  const entry = nodeActions?.[domain];
  if (entry === undefined) return '';
  return LAB_ACTION_ROLES.filter((role) => entry[role] !== undefined)
    .map((role) => `, ${role}: ${entry[role] as string}`)
    .join('');
}
