/**
 * `POST /v1/versions` (contract §11): `fleet version`'s one read per host. The runtime's package and
 * build identity (the generation its script sits in, else a development build), each named tool
 * the node policy lists (`versions.tools`; any other is answered `refused` and never run — a read
 * token is not a way to run programs) on the policy's login PATH (`versions.path`, default the
 * controller's) with its `--version`, every `fleet` along that PATH, and on darwin fleet's
 * launchd agents. Read-only; the answer is redacted like anything else leaving the node.
 *
 * Probers named in `probes` run in the same read (one request per host): only probers of no
 * domain — the supervisor's `runtime` prober, whose facts are the controller's own supervision
 * (unit or task state, generation, `--node-id`, the `current` pointer, lingering), and `version`
 * probers. A domain's prober is refused here (`SCOPE_DENIED`): its facts are the domain's, read
 * with `config:read` (contract §5).
 */
import {
  FleetError,
  NODE_POLICY_PATH,
  type SnapshotProbeResult,
  type VersionsRequest,
  type VersionsResponse,
  type VersionsTool,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { redactorOf } from '../runtime.js';
import {
  VERSION_TIMEOUT_MS,
  collectFleetOnPath,
  collectLaunchd,
  collectTools,
  type CollectInput,
} from '../versions/collect.js';
import { carriedPluginsOf } from './identity.js';
import { probeAnswer } from './probe-answer.js';
import type { Handler } from './types.js';

export const versions: Handler = async ({ runtime, principal, route, body }) => {
  const request = body as VersionsRequest;
  const ctx = createNodeContext({
    home: runtime.home,
    nodeId: runtime.nodeId,
    clock: runtime.clock,
    secrets: () => runtime.secrets(),
  });
  const { versions: allowed } = runtime.view.policy;
  const input: CollectInput = {
    home: runtime.home,
    platform: ctx.platform,
    path: allowed.path?.join(ctx.platform === 'win32' ? ';' : ':') ?? process.env['PATH'] ?? '',
    processes: ctx.processes,
    timeoutMs: VERSION_TIMEOUT_MS,
  };
  const requested = [...new Set(request.tools)];
  const refused: VersionsTool[] = requested
    .filter((name) => !allowed.tools.includes(name))
    .map((name) => ({
      name,
      state: 'refused',
      detail: `not run: this node's policy does not list ${name} (versions.tools in ${NODE_POLICY_PATH})`,
    }));
  const [probed, fleet, launchd] = await Promise.all([
    collectTools(
      requested.filter((name) => allowed.tools.includes(name)),
      input,
    ),
    collectFleetOnPath(input),
    ctx.platform === 'darwin' && typeof process.getuid === 'function'
      ? collectLaunchd(input, process.getuid())
      : Promise.resolve(undefined),
  ]);
  const redactor = await redactorOf(runtime);
  let probes: SnapshotProbeResult[] | undefined;
  if (request.probes !== undefined) {
    probes = [];
    for (const probe of request.probes) {
      probes.push(
        await probeAnswer({ runtime, principal, route }, probe, redactor, ({ descriptor }) => {
          if (descriptor.domain === undefined) return;
          throw new FleetError(
            'SCOPE_DENIED',
            `${descriptor.id} is the ${descriptor.domain} domain's prober: fleet version reads only the supervisor's and version probers (a domain's facts need config:read, through drift)`,
          );
        }),
      );
    }
  }
  const answer: VersionsResponse = {
    nodeId: runtime.nodeId,
    package: runtime.package.name,
    version: runtime.package.version,
    build: { sha256: runtime.build.sha256, commit: runtime.build.commit },
    platform: ctx.platform,
    // In the order asked: each tool probed, or refused.
    tools: [...probed, ...refused].sort(
      (a, b) => requested.indexOf(a.name) - requested.indexOf(b.name),
    ),
    fleet,
    plugins: carriedPluginsOf(runtime.registry).map(({ name, version, sha256 }) => ({
      name,
      version,
      sha256,
    })),
    ...(launchd === undefined ? {} : { launchd }),
    ...(probes === undefined ? {} : { probes }),
    collectedAt: runtime.clock.now().toISOString(),
  };
  return {
    status: 200,
    body: redactor.json(answer),
  };
};
