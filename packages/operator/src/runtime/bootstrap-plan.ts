/**
 * Deriving a bootstrap plan (contract §12), read-only: host, expected node id, platform, adapter,
 * artifact identity, the prior generation observed (through the controller, or — when it does
 * not answer — through the SSH recovery receiver's `status`), repo commit, protocol and the
 * expected catalog. `apply` derives it again and refuses any difference.
 */
import type { BootstrapPlanBody, RuntimeStatusResponse } from '@fleet/core';
import * as core from '@fleet/core';
import type { RecoveryTarget } from '../bootstrap/ssh.js';
import {
  canonicalArtifact,
  loadArtifact,
  planArtifactFields,
  type LoadedArtifact,
} from './artifact.js';
import type { HostRuntime } from './host.js';
import { RECEIVER_ERROR_PREFIX } from '../bootstrap/verbs.js';
import { runRecoveryVerb } from '../bootstrap/ssh.js';

/** The SSH recovery target of a host, or `null` when fleet.yaml or credentials have none. */
export function recoveryTarget(host: HostRuntime): RecoveryTarget | null {
  const ssh = host.entry.ssh;
  const identityFile = host.credentials.hosts[host.host]?.ssh?.identityFile;
  if (!ssh || !identityFile) return null;
  return {
    name: host.host,
    host: ssh.host,
    port: ssh.port,
    user: ssh.user,
    hostKey: ssh.hostKey,
    identityFile,
  };
}

/** The artifact a plan names: `--artifact FILE`, else fleet.yaml's for canonicalVersion. */
export async function planArtifact(
  host: HostRuntime,
  file: string | undefined,
): Promise<LoadedArtifact> {
  if (file === undefined) return canonicalArtifact(host.root, host.repo.manifest);
  const listed = host.repo.manifest.artifacts.find((a) => a.file === file);
  const loaded = await loadArtifact(
    host.root,
    file,
    listed ? { sha256: listed.sha256, commit: listed.commit, version: listed.version } : undefined,
    host.repo.manifest.plugins,
  );
  // A file fleet.yaml pins brings its signature; any other is unsigned (a node refuses it unless
  // its policy allows unsigned runtimes, ADR 0019).
  return listed?.signature === undefined ? loaded : { ...loaded, signature: listed.signature };
}

export type Observation =
  | { readonly through: 'controller'; readonly status: RuntimeStatusResponse }
  | { readonly through: 'ssh'; readonly status: RuntimeStatusResponse }
  | { readonly through: 'none'; readonly reason: string };

/** Runtime status through the controller, else through the SSH receiver (read-only either way). */
export async function observeRuntime(host: HostRuntime): Promise<Observation> {
  try {
    return {
      through: 'controller',
      status: await host.client.runtimeStatus({ supervisor: host.entry.supervisor }),
    };
  } catch (error) {
    const failure = core.asFleetError(error);
    if (failure.code !== 'HOST_UNREACHABLE' && failure.code !== 'REQUEST_TIMEOUT') throw error;
    const target = recoveryTarget(host);
    if (target === null) {
      return {
        through: 'none',
        reason: `the controller is unreachable (${failure.message}) and ${host.host} has no SSH recovery configured`,
      };
    }
    return { through: 'ssh', status: await statusOverSsh(target) };
  }
}

export async function statusOverSsh(target: RecoveryTarget): Promise<RuntimeStatusResponse> {
  const result = await runRecoveryVerb(target, 'status');
  return parseReceiverAnswer(result, core.runtimeStatusResponseSchema, 'status');
}

/**
 * The node's error in a failed receiver's stderr (pure): its `fleet-error:` line (receiver.ts)
 * when there is one — the node's code, kept — else, from a receiver that predates it, the human
 * `Error:` line (not a trailing hint) with the first known fleet code it names.
 */
export function receiverFailure(
  stderr: string,
  knownCodes: Readonly<Record<string, unknown>>,
): { readonly code: string | null; readonly message: string } {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  for (const line of lines) {
    if (!line.startsWith(RECEIVER_ERROR_PREFIX)) continue;
    try {
      const value = JSON.parse(line.slice(RECEIVER_ERROR_PREFIX.length)) as unknown;
      const { code, message } = (value ?? {}) as { code?: unknown; message?: unknown };
      if (typeof code === 'string' && typeof message === 'string') {
        return { code: Object.hasOwn(knownCodes, code) ? code : null, message };
      }
    } catch {
      // not the line it looks like: read the human lines instead
    }
  }
  const human = lines.filter((line) => !line.startsWith(RECEIVER_ERROR_PREFIX));
  const line =
    human.findLast((l) => l.startsWith('Error: ')) ??
    human.findLast((l) => !l.startsWith('hint: ')) ??
    '';
  const code = [...line.matchAll(/\b([A-Z][A-Z_]+[A-Z])\b/g)]
    .map((match) => match[1] as string)
    .find((word) => Object.hasOwn(knownCodes, word));
  return { code: code ?? null, message: line };
}

/** The receiver's JSON answer (exit 0), or its error as a fleet error with the node's code. */
export function parseReceiverAnswer<T>(
  result: { exitCode: number; stdout: string; stderr: string },
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  verb: string,
): T {
  if (result.exitCode !== 0) {
    const failure = receiverFailure(result.stderr, core.ERROR_CODES);
    throw new core.FleetError(
      (failure.code ?? 'ACTION_FAILED') as keyof typeof core.ERROR_CODES,
      `the node's recovery receiver refused ${verb} (exit ${result.exitCode}): ${failure.message || 'no message'}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    value = undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new core.FleetError(
      'RESPONSE_INVALID',
      `the node's recovery receiver answered ${verb} with something that is not its answer`,
    );
  }
  return parsed.data;
}

export interface DerivedPlan {
  readonly body: BootstrapPlanBody;
  readonly artifact: LoadedArtifact;
  readonly observation: Observation;
}

export async function derivePlan(
  host: HostRuntime,
  artifactFile: string | undefined,
): Promise<DerivedPlan> {
  const artifact = await planArtifact(host, artifactFile);
  const observation = await observeRuntime(host);
  if (observation.through === 'none') {
    throw new core.FleetError('HOST_UNREACHABLE', observation.reason, {
      suggestions: [
        `configure hosts.${host.host}.ssh in fleet.yaml and hosts.${host.host}.ssh.identityFile in the credentials file for the recovery path`,
      ],
    });
  }
  const observed = observation.status.observed;
  const repoCommit = await core
    .createGit(host.root)
    .run(['rev-parse', 'HEAD'])
    .then((out) => out.stdout.trim())
    .catch(() => null);
  const body: BootstrapPlanBody = {
    schema: core.BOOTSTRAP_PLAN_SCHEMA,
    host: host.host,
    nodeId: host.nodeId,
    platform: host.entry.platform,
    supervisor: host.entry.supervisor,
    route: observation.through,
    artifact: planArtifactFields(artifact.identity),
    prior: {
      build: observed.live ?? observed.pointer,
      observedThrough: observation.through,
    },
    repoCommit,
    protocol: core.FLEET_PROTOCOL_VERSION,
    target: core.targetExpectation({
      nodeId: host.nodeId,
      host: host.entry,
      artifact: artifact.identity,
      plugins: host.repo.manifest.plugins,
    }),
    // Where the new controller listens, and the certificate pin it must match (issue 35).
    listen: core.plannedListen(host.entry),
  };
  return { body, artifact, observation };
}
