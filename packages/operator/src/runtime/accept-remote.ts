/**
 * Acceptance from the operator's seat (issue 35 item 2): the node's runner accepts a new runtime
 * from the node itself, over loopback — which a controller listening on the wrong address passes.
 * After the runner accepted, the operator asks the controller at fleet.yaml's `controller` URL
 * (the host's client, pinned certificate and all) who it is; its node id and build must be the
 * plan's. Only then is the verb's answer "accepted" (contract §7: a failure is exit 6,
 * `ACCEPTANCE_FAILED`; a certificate that is not the pinned one keeps its own exit 4).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ControllerClient,
  IdentityResponse,
  RuntimeExpectation,
  TransactionVerdict,
} from '@fleet/core';
import * as core from '@fleet/core';

/** What the identity answered at the declared URL gets wrong against `target` (pure). */
export function remoteAcceptanceProblems(
  target: RuntimeExpectation,
  identity: Pick<IdentityResponse, 'nodeId' | 'build'>,
): string[] {
  const problems: string[] = [];
  if (identity.nodeId !== target.nodeId)
    problems.push(`node id ${identity.nodeId}, not ${target.nodeId}`);
  if (identity.build.sha256 !== target.build.sha256)
    problems.push(
      `build ${identity.build.sha256?.slice(0, 12) ?? '(development build)'}, not ${target.build.sha256.slice(0, 12)}`,
    );
  else if (identity.build.commit !== target.build.commit)
    problems.push(
      `build commit ${identity.build.commit ?? '(none)'}, not ${target.build.commit ?? '(none)'}`,
    );
  return problems;
}

/** How long the declared URL gets to answer after the runner accepted (it was already up). */
export const REMOTE_ACCEPTANCE_MS = 20_000;

/**
 * Asks `client` (fleet.yaml's URL for the host) until its identity is the target's or the time
 * is up; throws `ACCEPTANCE_FAILED` (or the client's own error when it is not about reaching it:
 * a certificate that is not the pinned one, a refused token) saying what was seen.
 */
export async function acceptFromOperator(input: {
  readonly client: ControllerClient;
  readonly target: RuntimeExpectation;
  readonly onProgress?: (line: string) => void;
  readonly timeoutMs?: number;
  readonly pollMs?: number;
}): Promise<IdentityResponse> {
  const { client, target } = input;
  const deadline = Date.now() + (input.timeoutMs ?? REMOTE_ACCEPTANCE_MS);
  input.onProgress?.(`accepting from here: ${client.url}`);
  let last = 'no answer';
  for (;;) {
    try {
      const identity = await client.identity();
      const problems = remoteAcceptanceProblems(target, identity);
      if (problems.length === 0) return identity;
      last = `it answers as ${problems.join('; ')}`;
    } catch (error) {
      const failure = core.asFleetError(error);
      // Reaching it may take a moment; a wrong certificate or token will not change.
      if (failure.code !== 'HOST_UNREACHABLE' && failure.code !== 'REQUEST_TIMEOUT') throw error;
      last = failure.message;
    }
    if (Date.now() >= deadline) break;
    await sleep(input.pollMs ?? 500);
  }
  throw new core.FleetError(
    'ACCEPTANCE_FAILED',
    `${client.host}: the node accepted the new runtime, but fleet.yaml's controller URL ${client.url} does not reach it as ${target.nodeId} ${target.build.sha256.slice(0, 12)}: ${last}`,
    {
      suggestions: [
        `fleet bootstrap status ${client.host} shows what the node runs; check hosts.${client.host}.controller in fleet.yaml against where its controller listens`,
      ],
    },
  );
}

/**
 * A verdict the node reached, completed by the operator's own acceptance: an accepted one whose
 * controller does not answer at the declared URL as the target keeps its outcome (the node did
 * accept it: the operator's log says so) and carries the operator's error, which the verb raises.
 */
export async function acceptedFromHere(
  verdict: TransactionVerdict,
  input: Parameters<typeof acceptFromOperator>[0],
): Promise<TransactionVerdict> {
  if (!verdict.done || verdict.outcome !== 'accepted' || verdict.error !== null) return verdict;
  try {
    await acceptFromOperator(input);
    return verdict;
  } catch (error) {
    if (error instanceof core.FleetError) return { ...verdict, error };
    const failure = core.asFleetError(error);
    const code = Object.hasOwn(core.ERROR_CODES, failure.code) ? failure.code : 'ACCEPTANCE_FAILED';
    return {
      ...verdict,
      error: new core.FleetError(code, failure.message, { suggestions: failure.suggestions ?? [] }),
    };
  }
}
