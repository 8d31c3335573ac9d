/**
 * Drift's probers (contract §8.1, §12, §14), operator side: loading the probers of a host's
 * domains and of its supervisor, the calls a host is asked to run (with their parameters for
 * that host), and the evaluation of what the node answered into report items. A prober that
 * cannot be asked or evaluated is one `error` item; the rest of the host's items stand.
 */
import { asFleetError } from '../client/for-each-host.js';
import type { DriftItem } from '../interfaces/drift.js';
import type { Registry } from '../registry/registry.js';
import { hostEntry, type FleetRepo } from '../repo/load.js';
import type { DriftReportItem } from '../report/drift-report.js';
import type { ProbeAnswer, ProbeCall, ProberRuntime } from './drift-inputs.js';
import { probeParameters } from './parameters.js';
import type { DomainRuntime } from './domain-runtime.js';

/** A prober's item as a report item (the domain filled in, nothing else added). */
function reportItem(item: DriftItem, domain: string | undefined): DriftReportItem {
  const itemDomain = item.domain ?? domain;
  return {
    layer: item.layer,
    ...(itemDomain === undefined ? {} : { domain: itemDomain }),
    ...(item.path === undefined ? {} : { path: item.path }),
    state: item.state,
    ...(item.localLines === undefined ? {} : { localLines: item.localLines }),
    ...(item.detail === undefined ? {} : { detail: item.detail }),
    ...(item.diff === undefined ? {} : { diff: item.diff }),
  };
}

/** A prober to ask the node, with the call that asks it. */
export interface ProberCall {
  readonly runtime: ProberRuntime;
  readonly call: ProbeCall;
}

/**
 * The calls of the probers that apply to the host: its supervisor's, and those of its domains.
 * A prober whose parameters cannot be computed is an `error` item in `items` instead.
 */
export function proberCalls(
  repo: FleetRepo,
  host: string,
  probers: readonly ProberRuntime[],
  domains: readonly DomainRuntime[],
  variables: Readonly<Record<string, string>>,
  items: DriftReportItem[],
): ProberCall[] {
  const calls: ProberCall[] = [];
  for (const runtime of probers) {
    if (runtime.supervisor !== undefined) {
      // The supervisor's prober (contract §12): a stopped, disabled or stale controller unit.
      if (runtime.supervisor !== hostEntry(repo, host).supervisor) continue;
      calls.push({ runtime, call: { prober: runtime.id, parameters: {} } });
      continue;
    }
    const domain = domains.find((d) => d.declaration.domain === runtime.domain);
    if (!domain) continue;
    try {
      calls.push({
        runtime,
        call: {
          prober: runtime.id,
          domain: domain.declaration.domain,
          parameters: probeParameters(domain.declaration, variables, host),
        },
      });
    } catch (error) {
      const failure = asFleetError(error);
      items.push({
        layer: runtime.layer,
        domain: runtime.domain,
        state: 'error',
        detail: `${runtime.id}: ${failure.code}: ${failure.message}`,
      });
    }
  }
  return calls;
}

/** Each prober's answer evaluated into `items`; one it did not answer or could not evaluate is an `error` item. */
export function evaluateProbes(
  repo: FleetRepo,
  host: string,
  variables: Readonly<Record<string, string>>,
  calls: readonly ProberCall[],
  probes: readonly ProbeAnswer[],
  items: DriftReportItem[],
): void {
  for (const { runtime, call } of calls) {
    const base = {
      layer: runtime.layer,
      ...(runtime.domain === undefined ? {} : { domain: runtime.domain }),
    } as const;
    const got = probes.find((p) => p.prober === runtime.id);
    if (!got) {
      items.push({
        ...base,
        state: 'error',
        detail: `${runtime.id}: the node did not answer this prober`,
      });
    } else if (got.state === 'error') {
      items.push({ ...base, state: 'error', detail: `${runtime.id}: ${got.code}: ${got.message}` });
    } else {
      try {
        const evaluated = runtime.prober.evaluate(got.facts, {
          host,
          variables,
          canonicalVersion: repo.manifest.canonicalVersion,
          parameters: call.parameters,
        });
        items.push(...evaluated.map((item) => reportItem(item, runtime.domain)));
      } catch (error) {
        const failure = asFleetError(error);
        items.push({
          ...base,
          state: 'error',
          detail: `${runtime.id}: could not evaluate its facts: ${failure.message}`,
        });
      }
    }
  }
}

/**
 * The implemented probers of the given domains, loaded (their operator half evaluates the facts).
 * A supervisor's probers come from {@link loadSupervisorProbers}. A prober whose plugin declares it
 * without an implementation is skipped.
 */
export async function loadDomainProbers(
  registry: Pick<Registry, 'probers' | 'prober'>,
  domains: readonly string[],
): Promise<ProberRuntime[]> {
  const out: ProberRuntime[] = [];
  for (const { descriptor } of registry.probers()) {
    if (descriptor.domain === undefined || !domains.includes(descriptor.domain)) continue;
    if (descriptor.load === undefined) continue;
    out.push({
      id: descriptor.id,
      layer: descriptor.layer,
      domain: descriptor.domain,
      prober: await registry.prober(descriptor.id),
    });
  }
  return out;
}

/**
 * The runtime probers of every supervisor's plugin (a prober of no domain registered by the
 * plugin that registers the bootstrap adapter): `systemd-user.unit`, `windows-task.task`. Drift
 * asks each host for its own supervisor's (contract §12: supervision drift is a `runtime` item).
 */
export async function loadSupervisorProbers(
  registry: Pick<Registry, 'probers' | 'prober' | 'bootstrapAdapters'>,
): Promise<ProberRuntime[]> {
  const out: ProberRuntime[] = [];
  const probers = registry.probers();
  for (const adapter of registry.bootstrapAdapters()) {
    for (const { plugin, descriptor } of probers) {
      if (plugin.name !== adapter.plugin.name || descriptor.domain !== undefined) continue;
      if (descriptor.layer !== 'runtime' || descriptor.load === undefined) continue;
      out.push({
        id: descriptor.id,
        layer: descriptor.layer,
        supervisor: adapter.descriptor.supervisor,
        prober: await registry.prober(descriptor.id),
      });
    }
  }
  return out;
}
