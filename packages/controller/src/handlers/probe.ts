/**
 * `POST /v1/probe`: runs a registered prober's node half (`collect`) and returns its facts,
 * redacted. The prober's own scope applies on top of the route's (core `proberScope`): a
 * supervisor prober is a bootstrap read. A prober declared without an implementation is
 * `DOMAIN_BEHAVIOUR_ABSENT` — declared, never faked.
 */
import type { ProbeRequest, ProbeResponse } from '@fleet/core/node';
import { redactorOf } from '../runtime.js';
import { runProbe } from './probe-answer.js';
import type { Handler } from './types.js';

export const probe: Handler = async ({ runtime, principal, route, body }) => {
  const request = body as ProbeRequest;
  const { state: _ok, ...answer } = await runProbe(
    { runtime, principal, route },
    { prober: request.prober, parameters: request.parameters },
    await redactorOf(runtime),
  );
  const response: ProbeResponse = answer;
  return { status: 200, body: response };
};
