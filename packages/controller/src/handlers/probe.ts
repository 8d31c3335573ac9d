/**
 * `POST /v1/probe`: runs a registered prober's node half (`collect`) and returns its facts,
 * redacted. The prober's own scope applies on top of the route's (core `proberScope`): a
 * supervisor prober is a bootstrap read. A prober declared without an implementation is
 * `DOMAIN_BEHAVIOUR_ABSENT` — declared, never faked.
 */
import {
  FleetError,
  jsonValueSchema,
  proberScope,
  type ProbeRequest,
  type ProbeResponse,
} from '@fleet/core';
import { createNodeContext } from '../context.js';
import { domainReader } from '../domain-reader.js';
import { redactorOf } from '../runtime.js';
import { authorize } from '../tokens/auth.js';
import type { Handler } from './types.js';

export const probe: Handler = async ({ runtime, principal, route, body }) => {
  const request = body as ProbeRequest;
  const entry = runtime.registry.probers().find((p) => p.descriptor.id === request.prober);
  if (!entry) {
    throw new FleetError('UNKNOWN_DOMAIN', `unknown prober ${JSON.stringify(request.prober)}`);
  }
  authorize(principal, route, proberScope(entry.descriptor));
  if (entry.descriptor.domain !== undefined)
    runtime.allowlist.requireServed(entry.descriptor.domain);
  const prober = await runtime.registry.prober(request.prober);
  const ctx = createNodeContext({
    home: runtime.home,
    nodeId: runtime.nodeId,
    clock: runtime.clock,
    secrets: () => runtime.secrets(),
    ...(entry.descriptor.domain === undefined
      ? {}
      : { files: domainReader(runtime, entry.descriptor.domain) }),
  });
  const facts = await prober.collect(ctx, request.parameters);
  const checked = jsonValueSchema.safeParse(facts);
  if (!checked.success) {
    throw new FleetError('INTERNAL', `prober ${request.prober} returned facts that are not JSON`);
  }
  const response: ProbeResponse = {
    prober: entry.descriptor.id,
    layer: entry.descriptor.layer,
    facts: (await redactorOf(runtime)).json(checked.data) as ProbeResponse['facts'],
    collectedAt: runtime.clock.now().toISOString(),
  };
  return { status: 200, body: response };
};
