/**
 * The acceptance kit's coupled actions (docs/plugin-authoring.md, "The acceptance test"): the node
 * policy actions a domain needs, as plain data in the shape a node policy gives them
 * (docs/node-policy.md: `argv` — an absolute program or `~/…`, `~` the lab node's home, `{file}`
 * the staged file a validate action checks —, `timeoutSeconds`, `output`), and the roles the
 * lab's fleet.yaml names them for. The kit hands them to `fleet lab up --node-actions`: the lab
 * writes them into its node's policy when it makes it — policy changes travel over SSH only
 * (contract §5.1), and in a lab that is the lab writing its own nodes' policies, never a request.
 */
import type { Receipt, policyActionSchema } from '@fleet/core';
import type * as z from '@fleet/core/zod';

/** One node policy action (docs/node-policy.md, `domains.<d>.actions.<id>`). */
export type AcceptanceAction = z.input<typeof policyActionSchema>;

/** The roles a domain's install may ask node policy actions for (fleet.yaml, by id). */
export const ACCEPTANCE_ROLES = ['validate', 'reload', 'restart'] as const;
export type AcceptanceRole = (typeof ACCEPTANCE_ROLES)[number];

/**
 * The domain's coupled actions on the lab node: its node policy's `actions` by id, and for each
 * role the install asks for (`validate` runs on the staged new file before it replaces the old;
 * `reload`, `restart` after the writes) the id fleet.yaml names.
 */
export interface AcceptanceNodeActions {
  readonly actions: Readonly<Record<string, AcceptanceAction>>;
  readonly validate?: string;
  readonly reload?: string;
  readonly restart?: string;
}

/** The roles `nodeActions` names, in the order the kit checks them (pure). */
export function namedRoles(nodeActions: AcceptanceNodeActions | undefined): AcceptanceRole[] {
  if (nodeActions === undefined) return [];
  return ACCEPTANCE_ROLES.filter((role) => nodeActions[role] !== undefined);
}

/** The `--node-actions` file `fleet lab up` reads: the domain's section (pure). */
export function nodeActionsDocument(
  domain: string,
  nodeActions: AcceptanceNodeActions,
): Record<string, AcceptanceNodeActions> {
  return { [domain]: nodeActions };
}

/**
 * Why the receipt of a successful install does not show each named role's action `ok`, or
 * undefined when it does (pure): an action that did not run is no coupled action covered.
 */
export function rolesNotRun(
  receipt: Pick<Receipt, 'actions'>,
  nodeActions: AcceptanceNodeActions | undefined,
): string | undefined {
  const missing = namedRoles(nodeActions).filter(
    (role) => !receipt.actions.some((action) => action.kind === role && action.status === 'ok'),
  );
  if (missing.length === 0) return undefined;
  return `the receipt shows no ${missing.join(', ')} action ok (it shows ${
    receipt.actions.map((a) => `${a.kind} ${a.status}`).join(', ') || 'none'
  })`;
}
