/**
 * What the operator sends a node besides the files, operator side and pure:
 * - an install's `parameters`: the host variables the domain declares, each derived path's node
 *   path for this host (the router's installed volume), and the domain's reload command from
 *   fleet.yaml (`domains.<domain>.reload`, an argv array);
 * - a prober's parameters: the node paths of the domain's files and derived paths for this host.
 *
 * Fleet's own keys carry a `fleet.` prefix, which no host variable name can have.
 */
import { FleetError } from '../errors.js';
import type { DomainDeclaration } from '../interfaces/domain.js';
import type { JsonObject } from '../interfaces/drift.js';
import { nodePathFor } from '../render/views.js';
import { hostVariables, type FleetRepo } from '../repo/load.js';

/** The install parameter holding a derived path's node path (`fleet.derived.volume`). */
export function derivedPathParameter(id: string): string {
  return `fleet.derived.${id}`;
}

/** The install parameter holding the domain's reload command: a JSON-encoded argv array. */
export const RELOAD_PARAMETER = 'fleet.reload';

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
  const reload = repo.manifest.domains[declaration.domain]?.reload;
  if (reload !== undefined) parameters[RELOAD_PARAMETER] = JSON.stringify(reload);
  return parameters;
}

/**
 * The reload command an install request carries, validated again on the node (the request
 * crossed the wire): `undefined` when none is configured.
 */
export function reloadCommand(
  parameters: Readonly<Record<string, string>>,
): readonly [string, ...string[]] | undefined {
  const text = parameters[RELOAD_PARAMETER];
  if (text === undefined) return undefined;
  let argv: unknown;
  try {
    argv = JSON.parse(text);
  } catch {
    argv = undefined;
  }
  if (
    !Array.isArray(argv) ||
    argv.length === 0 ||
    argv.length > 64 ||
    !argv.every(
      (arg) =>
        typeof arg === 'string' &&
        arg.length > 0 &&
        arg.length <= 4096 &&
        ![...arg].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
    ) ||
    /\s/.test(argv[0] as string)
  ) {
    throw new FleetError(
      'BAD_REQUEST',
      `${RELOAD_PARAMETER} must be a JSON argv array of non-empty strings (never a shell line)`,
    );
  }
  return argv as [string, ...string[]];
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

/** The node path a prober was given for one of its domain's ids, else the declared default. */
export function probedPath(parameters: JsonObject, id: string, fallback: string): string {
  const paths = parameters['paths'];
  if (paths !== null && typeof paths === 'object' && !Array.isArray(paths)) {
    const value = (paths as JsonObject)[id];
    if (typeof value === 'string') return value;
  }
  return fallback;
}
