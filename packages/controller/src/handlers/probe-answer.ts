/**
 * One prober run inside a read that carries probes (`POST /v1/snapshot` for drift, `POST
 * /v1/versions` for `fleet version`), as `POST /v1/probe` runs it: its own scope on top of the
 * route's (core `proberScope`), its facts checked as JSON and redacted. A failure is that prober's
 * answer, never the whole read's, so the other files, tools and probers still stand.
 */
import {
  FleetError,
  isFleetError,
  jsonValueSchema,
  proberScope,
  type JsonObject,
  type Redactor,
  type SnapshotProbeResult,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { domainReader, type SessionReads } from '../domain-reader.js';
import type { ControllerRuntime } from '../runtime.js';
import { authorize } from '../tokens/auth.js';
import type { RequestContext } from './types.js';

type ProbeFacts = Extract<SnapshotProbeResult, { state: 'ok' }>['facts'];

export interface ProbeAsked {
  readonly prober: string;
  /** The domain of a domain's prober: a node that lacks it answers `DOMAIN_NOT_SERVED`. */
  readonly domain?: string | undefined;
  readonly parameters: JsonObject;
}

type Registered = ReturnType<ControllerRuntime['registry']['probers']>[number];

type ProbeOk = Extract<SnapshotProbeResult, { state: 'ok' }>;

/**
 * Runs `probe` — the one way a node runs a prober, for `POST /v1/probe` and for the reads that
 * carry probes alike — and throws what refuses it. `admit`, when given, may refuse a registered
 * prober before it runs (by throwing a `FleetError`): the versions read admits only probers of no
 * domain.
 */
export async function runProbe(
  context: Pick<RequestContext, 'runtime' | 'principal' | 'route'>,
  probe: ProbeAsked,
  redactor: Redactor,
  admit?: (entry: Registered) => void,
  within?: SessionReads,
): Promise<ProbeOk> {
  const { runtime } = context;
  const entry = runtime.registry.probers().find((p) => p.descriptor.id === probe.prober);
  if (!entry) {
    // A prober of a domain this node lacks: say so (DOMAIN_NOT_SERVED), not "unknown".
    if (probe.domain !== undefined) runtime.allowlist.requireServed(probe.domain);
    throw new FleetError('UNKNOWN_DOMAIN', `unknown prober ${JSON.stringify(probe.prober)}`);
  }
  admit?.(entry);
  authorize(context.principal, context.route, proberScope(entry.descriptor));
  if (entry.descriptor.domain !== undefined)
    runtime.allowlist.requireServed(entry.descriptor.domain);
  const prober = await runtime.registry.prober(probe.prober);
  const ctx = createNodeContext({
    home: runtime.home,
    nodeId: runtime.nodeId,
    clock: runtime.clock,
    secrets: () => runtime.secrets(),
    ...(entry.descriptor.domain === undefined
      ? {}
      : { files: domainReader(runtime, entry.descriptor.domain, within) }),
  });
  const checked = jsonValueSchema.safeParse(await prober.collect(ctx, probe.parameters));
  if (!checked.success) {
    throw new FleetError('INTERNAL', `prober ${probe.prober} returned facts that are not JSON`);
  }
  return {
    prober: entry.descriptor.id,
    state: 'ok',
    layer: entry.descriptor.layer,
    facts: redactor.json(checked.data) as ProbeFacts,
    collectedAt: runtime.clock.now().toISOString(),
  };
}

/**
 * {@link runProbe} inside a read that carries probes: a failure is that prober's answer, never
 * the whole read's. `within`: the read's own session (a snapshot's), which the prober's file
 * reads go through.
 */
export async function probeAnswer(
  context: Pick<RequestContext, 'runtime' | 'principal' | 'route'>,
  probe: ProbeAsked,
  redactor: Redactor,
  admit?: (entry: Registered) => void,
  within?: SessionReads,
): Promise<SnapshotProbeResult> {
  try {
    return await runProbe(context, probe, redactor, admit, within);
  } catch (error) {
    return probeFailed(probe.prober, error, redactor);
  }
}

/** A prober's answer when it could not run, or its reads were refused after it ran. */
export function probeFailed(
  prober: string,
  error: unknown,
  redactor: Redactor,
): Extract<SnapshotProbeResult, { state: 'error' }> {
  const code = isFleetError(error) ? error.code : 'INTERNAL';
  const message = isFleetError(error) ? error.message : 'the prober failed';
  return { prober, state: 'error', code, message: redactor.annotation(message) };
}
