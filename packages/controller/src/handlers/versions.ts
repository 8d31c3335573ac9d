/**
 * `POST /v1/versions` (contract §11): `fleet version`'s one read per host. The runtime's package and
 * build identity (the generation its script sits in, else a development build), each named tool
 * on the controller's PATH with its `--version`, every `fleet` along PATH, and on darwin fleet's
 * launchd agents. Read-only; the answer is redacted like anything else leaving the node.
 */
import type { VersionsRequest, VersionsResponse } from '@fleet/core';
import { createNodeContext } from '../context.js';
import { redactorOf } from '../runtime.js';
import {
  VERSION_TIMEOUT_MS,
  collectFleetOnPath,
  collectLaunchd,
  collectTools,
  type CollectInput,
} from '../versions/collect.js';
import type { Handler } from './types.js';

export const versions: Handler = async ({ runtime, body }) => {
  const request = body as VersionsRequest;
  const ctx = createNodeContext({
    home: runtime.home,
    nodeId: runtime.nodeId,
    clock: runtime.clock,
  });
  const input: CollectInput = {
    home: runtime.home,
    platform: ctx.platform,
    path: process.env['PATH'] ?? '',
    processes: ctx.processes,
    timeoutMs: VERSION_TIMEOUT_MS,
  };
  const [tools, fleet, launchd] = await Promise.all([
    collectTools(request.tools, input),
    collectFleetOnPath(input),
    ctx.platform === 'darwin' && typeof process.getuid === 'function'
      ? collectLaunchd(input, process.getuid())
      : Promise.resolve(undefined),
  ]);
  const answer: VersionsResponse = {
    nodeId: runtime.nodeId,
    package: runtime.package.name,
    version: runtime.package.version,
    build: { sha256: runtime.build.sha256, commit: runtime.build.commit },
    platform: ctx.platform,
    tools,
    fleet,
    ...(launchd === undefined ? {} : { launchd }),
    collectedAt: runtime.clock.now().toISOString(),
  };
  return {
    status: 200,
    body: (await redactorOf(runtime)).json(answer),
  };
};
