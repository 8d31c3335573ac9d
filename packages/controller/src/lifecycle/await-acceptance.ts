/**
 * The runner's wait for acceptance (contract §12): the live runtime's `GET /v1/identity` asked
 * again and again, each answer judged by the transaction's expectation (generations/acceptance.ts),
 * until it is accepted or the timeout passes. An activation, a resume and a rollback wait the same
 * way (runner.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControllerClient, IdentityResponse, RuntimeExpectation } from '@fleet/core/node';
import {
  acceptRuntime,
  describeFailures,
  type Acceptance,
  type AcceptanceCriterion,
} from '../generations/acceptance.js';

const POLL_MS = 250;
/** Criteria a running runtime cannot change without a restart. */
const IMMUTABLE = new Set<AcceptanceCriterion>([
  'node-id',
  'node-id-flag',
  'package',
  'version',
  'build-sha256',
  'build-commit',
  'protocol',
  'catalog',
]);

/**
 * Polls `client`'s identity until it is accepted or `timeoutMs` passes; logs the verdict. The last
 * identity is `null` when the runtime never answered.
 */
export async function awaitAcceptance(
  client: ControllerClient,
  expectation: RuntimeExpectation,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<{ acceptance: Acceptance; identity: IdentityResponse | null }> {
  const deadline = Date.now() + timeoutMs;
  let identity: IdentityResponse | null = null;
  let acceptance: Acceptance = acceptRuntime(expectation, null);
  let settled = 0;
  let previous = '';
  do {
    identity = await client.identity().catch(() => null);
    acceptance = acceptRuntime(expectation, identity);
    if (acceptance.accepted) break;
    // A runtime that answers with the wrong identity does not change its mind: the same answer
    // three times over ends the wait. Health and reachability may still come: they get the
    // whole timeout.
    const settling = acceptance.failures.every((f) => IMMUTABLE.has(f.criterion));
    const answer = describeFailures(acceptance.failures).join('; ');
    settled = settling && answer === previous ? settled + 1 : settling ? 1 : 0;
    previous = answer;
    if (settled >= 3) break;
    await sleep(POLL_MS);
  } while (Date.now() < deadline);
  log(
    acceptance.accepted
      ? `accepted: ${expectation.build.sha256.slice(0, 12)} answers as ${expectation.nodeId}`
      : `not accepted (waited up to ${timeoutMs} ms): ${describeFailures(acceptance.failures).join('; ')}`,
  );
  return { acceptance, identity };
}
