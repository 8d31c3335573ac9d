/** `GET /v1/identity` (the exact shape of contract §5) and `GET /v1/health`. */
import {
  FLEET_PROTOCOL_VERSION,
  type CarriedPlugin,
  type Catalog,
  type Health,
  type IdentityResponse,
  type Registry,
} from '@fleet/core/node';
import type { ControllerRuntime } from '../runtime.js';
import type { Handler } from './types.js';

/**
 * The plugins the node loaded from its generation (contract §10.5): each accepted plugin that
 * carries a verified pin, with the domains it registered. Bundled plugins carry none.
 */
export function carriedPluginsOf(registry: Registry): CarriedPlugin[] {
  return registry.plugins.flatMap((plugin) =>
    plugin.sha256 === undefined
      ? []
      : [
          {
            name: plugin.name,
            version: plugin.version,
            sha256: plugin.sha256,
            domains: registry
              .domains()
              .filter((entry) => entry.plugin.name === plugin.name)
              .map((entry) => entry.descriptor.domain),
          },
        ],
  );
}

/** The node's catalog: every registered domain, prober and bootstrap adapter, sorted. */
export function catalogOf(registry: Registry): Catalog {
  return {
    plugins: carriedPluginsOf(registry),
    domains: registry.domains().map(({ plugin, descriptor }) => ({
      domain: descriptor.domain,
      plugin: plugin.name,
      version: plugin.version,
      coupling: descriptor.coupling.kind,
      implemented: descriptor.load !== undefined,
    })),
    probers: registry.probers().map(({ plugin, descriptor }) => ({
      id: descriptor.id,
      layer: descriptor.layer,
      domain: descriptor.domain ?? null,
      plugin: plugin.name,
      version: plugin.version,
      implemented: descriptor.load !== undefined,
    })),
    bootstrapAdapters: registry.bootstrapAdapters().map(({ plugin, descriptor }) => ({
      supervisor: descriptor.supervisor,
      platforms: [...descriptor.platforms],
      plugin: plugin.name,
      version: plugin.version,
      implemented: descriptor.load !== undefined,
    })),
  };
}

export async function healthOf(runtime: ControllerRuntime): Promise<Health> {
  const checks: Health['checks'] = [];
  try {
    const tokens = await runtime.tokens.current();
    checks.push({ name: 'token-store', status: 'ok', detail: `${tokens.size} token(s)` });
  } catch (error) {
    checks.push({ name: 'token-store', status: 'failing', detail: (error as Error).message });
  }
  // Fails closed (docs/audit-log.md): a refused or failed log degrades health until restarted.
  const audit = runtime.audit.problem();
  checks.push(
    audit === undefined
      ? { name: 'audit-log', status: 'ok', detail: `head seq ${runtime.audit.head().seq}` }
      : { name: 'audit-log', status: 'failing', detail: audit },
  );
  for (const alarm of runtime.alarms.list()) {
    checks.push({ name: alarm.name, status: 'failing', detail: alarm.detail });
  }
  const problems = runtime.registry.problems;
  checks.push(
    problems.length === 0
      ? { name: 'plugins', status: 'ok', detail: `${runtime.registry.domains().length} domain(s)` }
      : {
          name: 'plugins',
          status: 'failing',
          detail: problems.map((problem) => problem.message).join('; '),
        },
  );
  const { view } = runtime;
  if (view.problem === null) {
    const served = view.allowlist.served();
    const actions = served.reduce(
      (n, domain) => n + Object.keys(view.allowlist.actionsOf(domain)).length,
      0,
    );
    checks.push({
      name: 'node-policy',
      status: 'ok',
      detail: `serving ${served.join(', ') || 'no domain'}; ${actions} action(s)`,
    });
  } else {
    checks.push({ name: 'node-policy', status: 'failing', detail: view.problem.message });
  }
  checks.push({ name: 'recovery', status: 'ok', detail: runtime.recovery.detail });
  return {
    status: checks.every((check) => check.status === 'ok') ? 'ok' : 'degraded',
    checks,
  };
}

/** What this controller answers to `GET /v1/identity`. */
export async function identityOf(runtime: ControllerRuntime): Promise<IdentityResponse> {
  return {
    nodeId: runtime.nodeId,
    nodeIdFlag: runtime.nodeId,
    package: runtime.package.name,
    version: runtime.package.version,
    build: { sha256: runtime.build.sha256, commit: runtime.build.commit },
    protocol: FLEET_PROTOCOL_VERSION,
    catalog: catalogOf(runtime.registry),
    pid: process.pid,
    startedAt: runtime.startedAt,
    health: await healthOf(runtime),
  };
}

export const identity: Handler = async ({ runtime }) => ({
  status: 200,
  body: await identityOf(runtime),
});

export const health: Handler = async ({ runtime }) => ({
  status: 200,
  body: await healthOf(runtime),
});
