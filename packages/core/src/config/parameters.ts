/**
 * What the operator sends a node besides the files, operator side and pure:
 * - an install's `parameters`: the host variables the domain declares and each derived path's
 *   node path for this host (the router's installed volume);
 * - an install's `actions`: the node policy action ids the install asks for — fleet.yaml
 *   `domains.<domain>.validate|reload|restart` as `{ reload: <id>, … }`. Never an argv: what an id runs is each
 *   node's own policy (contract §5.1);
 * - a prober's parameters: the node paths of the domain's files and derived paths for this host.
 *
 * Fleet's own keys carry a `fleet.` prefix, which no host variable name can have.
 */
import type { DomainDeclaration } from '../interfaces/domain.js';
import type { JsonObject } from '../interfaces/drift.js';
import { nodePathFor } from '../render/views.js';
import { hostVariables, type FleetRepo } from '../repo/load.js';
import { ACTION_ROLES, derivedPathParameter } from './parameter-names.js';

export {
  ACTION_ROLES,
  RELOAD_ROLE,
  RESTART_ROLE,
  VALIDATE_ROLE,
  derivedPathParameter,
  probedPath,
  type ActionRole,
} from './parameter-names.js';

/** An install's `parameters` for one host and domain. */
export function installParameters(
  repo: FleetRepo,
  host: string,
  declaration: DomainDeclaration,
): Record<string, string> {
  const variables = hostVariables(repo, host);
  const hostFile = `hosts/${host}.yaml`;
  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (declaration.hostVariables.includes(name)) parameters[name] = value;
  }
  for (const derived of declaration.derivedPaths ?? []) {
    parameters[derivedPathParameter(derived.id)] = nodePathFor(derived, variables, hostFile);
  }
  return parameters;
}

/** An install's `actions` for one domain: each role fleet.yaml sets to a node policy action id. */
export function installActions(
  repo: FleetRepo,
  declaration: DomainDeclaration,
): Record<string, string> {
  const entry = repo.manifest.domains[declaration.domain];
  const actions: Record<string, string> = {};
  for (const role of ACTION_ROLES) {
    const id = entry?.[role];
    if (id !== undefined) actions[role] = id;
  }
  return actions;
}

/** A prober's parameters for one host: `{ paths: { <file or derived id>: <node path> } }`. */
export function probeParameters(
  declaration: DomainDeclaration,
  variables: Readonly<Record<string, string>>,
  host: string,
): JsonObject {
  const hostFile = `hosts/${host}.yaml`;
  const paths: Record<string, string> = {};
  for (const file of declaration.files) paths[file.id] = nodePathFor(file, variables, hostFile);
  for (const derived of declaration.derivedPaths ?? []) {
    paths[derived.id] = nodePathFor(derived, variables, hostFile);
  }
  return { paths };
}
