/**
 * `POST /v1/versions` (contract §11): `fleet version`'s one read per host. The runtime's package and
 * build identity (the generation its script sits in, else a development build), each named tool
 * the node policy lists (`versions.tools`; any other is answered `refused` and never run — a read
 * token is not a way to run programs) with every executable of its name along the PATH and the
 * `--version` of each that can start, every `fleet` along that PATH, the PATH itself and where it
 * came from (the policy's `versions.path`, else the user's login PATH the controller learned —
 * versions/login-path.ts), and on darwin fleet's launchd agents. Read-only; the answer is redacted like anything else leaving the node.
 *
 * Probers named in `probes` run in the same read (one request per host): only probers of no
 * domain — the supervisor's `runtime` prober, whose facts are the controller's own supervision
 * (unit or task state, generation, `--node-id`, the `current` pointer, lingering), and `version`
 * probers. A domain's prober is refused here (`SCOPE_DENIED`): its facts are the domain's, read
 * with `config:read` (contract §5).
 */
import {
  FleetError,
  MAX_LOGIN_PATH_DIRECTORIES,
  MAX_VERSION_TEXT,
  NODE_POLICY_PATH,
  type LoginPath,
  type Platform,
  type SnapshotProbeResult,
  type VersionsRequest,
  type VersionsResponse,
  type VersionsTool,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { redactorOf, type ControllerRuntime } from '../runtime.js';
import {
  VERSION_TIMEOUT_MS,
  collectFleetOnPath,
  collectLaunchd,
  collectTools,
  pathDirectories,
  type CollectInput,
} from '../versions/collect.js';
import { carriedPluginsOf } from './identity.js';
import { probeAnswer } from './probe-answer.js';
import type { Handler } from './types.js';

/**
 * The PATH tools are probed on (docs/version.md): the node policy's `versions.path` when it names
 * one, else the user's login PATH this controller learned, else (it could not) its own PATH.
 */
async function probedPath(
  runtime: ControllerRuntime,
  policyPath: readonly string[] | undefined,
  platform: Platform,
): Promise<{ path: string; loginPath: LoginPath }> {
  const delimiter = platform === 'win32' ? ';' : ':';
  const shown = (path: string) =>
    pathDirectories(path, platform).slice(0, MAX_LOGIN_PATH_DIRECTORIES);
  if (policyPath !== undefined) {
    const path = policyPath.join(delimiter);
    return {
      path,
      loginPath: {
        source: 'policy',
        directories: shown(path),
        learnedAt: null,
        detail: `versions.path in ${NODE_POLICY_PATH}`,
      },
    };
  }
  const learned = await runtime.loginPath.get();
  if (learned.source === 'login-shell') {
    const { path, learnedAt, detail } = learned;
    return {
      path,
      loginPath: { source: 'login-shell', directories: shown(path), learnedAt, detail },
    };
  }
  const path = process.env['PATH'] ?? '';
  return {
    path,
    loginPath: {
      source: 'controller',
      directories: shown(path),
      learnedAt: null,
      detail: learned.detail.slice(0, MAX_VERSION_TEXT * 2),
    },
  };
}

export const versions: Handler = async ({ runtime, principal, route, body }) => {
  const request = body as VersionsRequest;
  const ctx = createNodeContext({
    home: runtime.home,
    nodeId: runtime.nodeId,
    clock: runtime.clock,
    secrets: () => runtime.secrets(),
  });
  const { versions: allowed } = runtime.view.policy;
  const { path, loginPath } = await probedPath(runtime, allowed.path, ctx.platform);
  const input: CollectInput = {
    home: runtime.home,
    platform: ctx.platform,
    path,
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
    loginPath,
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
