/**
 * What an install request must satisfy on this node before anything is written (contract §5.1,
 * §8.4): the domain is served; an unattended install is allowed (never for a process-coupled
 * domain); every file is one the domain declares, or a per-host path its node policy lists, named
 * by its own file id, within the size bound; every `fleet.` parameter is known — a derived path
 * only where the policy accepts it, an argv (`fleet.reload`, protocol 1) never; every action id —
 * the request's and each file's own (a files entry's `action`, contract §10.4) — is one the policy
 * defines for the domain; a file's `mode` or `action` only for a domain whose files are declared
 * in the repository (its installer is the one that honours them: any other would ignore them).
 */
import {
  FleetError,
  NODE_POLICY_PATH,
  derivedPathParameter,
  type ActionRun,
  type AuditAction,
  type InstallRequest,
  type Redactor,
} from '@fleet/core/node';
import type { Allowlist } from '../allowlist.js';
import type { ControllerRuntime } from '../runtime.js';

/** A request's `fleet.reload` parameter: an argv, which no request may carry (protocol 1). */
const ARGV_PARAMETER = 'fleet.reload';

function checkUnattended(
  allowlist: Allowlist,
  request: InstallRequest,
  processCoupled: boolean,
): void {
  const { domain } = request;
  // A file with its own action runs a process: like a process-coupled domain, never unattended
  // (contract §5.1, §10.3), whatever the policy says.
  const withAction = request.files.find((file) => file.action !== undefined);
  if (withAction !== undefined) {
    throw new FleetError(
      'POLICY_REFUSED',
      `unattended installs of ${withAction.path} are refused: it runs the action ${withAction.action} after its write, and a scheduled run never starts a process (contract §10.3); nothing was written`,
    );
  }
  // A role action (validate, reload, restart) is a process too.
  const [role, id] = Object.entries(request.actions ?? {})[0] ?? [];
  if (role !== undefined) {
    throw new FleetError(
      'POLICY_REFUSED',
      `unattended installs of ${domain} are refused: the install names the action ${id} (${role}), and a scheduled run never starts a process (contract §10.3); nothing was written`,
    );
  }
  if (allowlist.unattendedAllowed(domain, processCoupled)) return;
  throw new FleetError(
    'POLICY_REFUSED',
    processCoupled
      ? `unattended installs of ${domain} are refused: its installer owns process actions (contract §10.3), whatever a policy or a request says`
      : `this node's policy does not allow unattended installs of ${domain} (domains.${domain}.unattended in ${NODE_POLICY_PATH})`,
  );
}

/** The request's files: each accepted for the domain, as its own file id, once, bounded. */
function checkFiles(
  runtime: ControllerRuntime,
  request: InstallRequest,
  repoDeclared: boolean,
): string[] {
  const paths: string[] = [];
  for (const file of request.files) {
    if (
      !repoDeclared &&
      (file.mode !== undefined ||
        file.action !== undefined ||
        file.template !== undefined ||
        file.encoding !== undefined)
    ) {
      const field =
        file.mode !== undefined
          ? 'mode'
          : file.action !== undefined
            ? 'action'
            : file.template !== undefined
              ? 'template flag'
              : 'byte encoding';
      throw new FleetError(
        'BAD_REQUEST',
        `${file.path}: domain ${request.domain} declares its own files; a request cannot give them a ${field}`,
      );
    }
    const entry = runtime.allowlist.require(file.path, request.domain);
    if (entry.fileId !== file.fileId) {
      throw new FleetError(
        'BAD_REQUEST',
        `${file.path} is file ${entry.fileId} of ${entry.domain}, not ${file.fileId}`,
      );
    }
    if (paths.includes(file.path))
      throw new FleetError('BAD_REQUEST', `${file.path} is listed twice`);
    if (Buffer.byteLength(file.content) > runtime.limits.maxFileBytes) {
      throw new FleetError(
        'FILE_TOO_LARGE',
        `${file.path}: content over the ${runtime.limits.maxFileBytes}-byte bound`,
      );
    }
    paths.push(file.path);
  }
  return paths;
}

/** fleet's own parameters: the domain's derived paths, each where the policy accepts it. */
function checkParameters(
  allowlist: Allowlist,
  request: InstallRequest,
  derivedIds: readonly string[],
): void {
  const derived = new Map(derivedIds.map((id) => [derivedPathParameter(id), id]));
  for (const [name, value] of Object.entries(request.parameters)) {
    if (!name.startsWith('fleet.')) continue;
    if (name === ARGV_PARAMETER) {
      throw new FleetError(
        'POLICY_REFUSED',
        `${ARGV_PARAMETER}: a request never carries an argv; it names an action id (actions.reload) and the node runs only what its own policy defines (${NODE_POLICY_PATH})`,
      );
    }
    const id = derived.get(name);
    if (id === undefined) {
      throw new FleetError('BAD_REQUEST', `unknown parameter ${name} for domain ${request.domain}`);
    }
    // A derived path moved by a host's variables: accepted only where the policy lists it.
    const entry = allowlist.require(value, request.domain);
    if (entry.fileId !== id) {
      throw new FleetError(
        'BAD_REQUEST',
        `${name}: ${value} is ${entry.fileId} of ${entry.domain}, not the derived path ${id}`,
      );
    }
  }
}

/** Every action id the request names is one the node policy defines for the domain. */
function checkActions(allowlist: Allowlist, request: InstallRequest): void {
  const actions = allowlist.actionsOf(request.domain);
  const named = [
    ...Object.entries(request.actions ?? {}),
    ...request.files.flatMap((file) =>
      file.action === undefined ? [] : [[`after ${file.path}`, file.action] as const],
    ),
  ];
  for (const [role, id] of named) {
    if (Object.hasOwn(actions, id)) continue;
    throw new FleetError(
      'POLICY_REFUSED',
      `action ${JSON.stringify(id)} (${role}) is not defined for domain ${request.domain} in this node's policy (domains.${request.domain}.actions.${id} in ${NODE_POLICY_PATH}); nothing was written`,
    );
  }
}

/** Checks the request against this node and its policy; returns its paths. Writes nothing. */
export function validate(runtime: ControllerRuntime, request: InstallRequest): string[] {
  const { allowlist } = runtime;
  allowlist.requireServed(request.domain);
  const { descriptor } = runtime.registry.domain(request.domain);
  if (request.unattended === true) {
    checkUnattended(allowlist, request, descriptor.coupling.kind === 'process');
  }
  const paths = checkFiles(runtime, request, descriptor.repoManifest !== undefined);
  checkParameters(
    allowlist,
    request,
    (descriptor.derivedPaths ?? []).map((d) => d.id),
  );
  checkActions(allowlist, request);
  return paths;
}

/** The actions an install ran, as its audit record names them (argv redacted like any text). */
export function auditedActions(runs: readonly ActionRun[], redactor: Redactor): AuditAction[] {
  return runs.map((run) => ({
    id: run.id,
    argv: run.argv.map((arg) => redactor.annotation(arg)),
    exitCode: run.exitCode,
    timedOut: run.timedOut,
  }));
}
