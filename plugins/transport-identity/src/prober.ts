/**
 * The `runtime` layer of transport-identity (contract §10.2): three things must name one node — the
 * identity file's `expected_node`, the `--node-id` the running controller was started with, and the
 * repository's `node_id` for the host.
 *
 * Node half (`collect`, read-only): the identity file read through the controller's safe reads,
 * its `expected_node`, and the running flag. Operator half (`evaluate`), one item:
 * - `current`: all three agree (or there is no identity file yet and the flag is the repo's id);
 * - `stale`: the node is consistent (file and flag agree) but the repo names another id — an
 *   install of transport-identity switches the node over;
 * - `diverged`: the file and the running flag disagree (or the file is unreadable): the next start
 *   of the controller will refuse to serve.
 */
import {
  FleetError,
  createHomeFileReader,
  probedPath,
  type DriftItem,
  type JsonObject,
  type JsonValue,
  type NodeContext,
  type ProbeDesired,
  type Prober,
} from '@fleet/core/plugin';
import { transportIdentityDomain } from './domain.js';
import { parseIdentity } from './identity-file.js';

const IDENTITY = transportIdentityDomain.files[0];
export const NODE_ID_PROBER = 'transport-identity.node-id';

export interface NodeIdFacts extends JsonObject {
  readonly path: string;
  readonly file: 'absent' | 'present' | 'invalid';
  readonly expectedNode: string | null;
  /** The `--node-id` the controller answering the probe runs with. */
  readonly runningFlag: string;
}

async function collect(ctx: NodeContext, parameters: JsonObject): Promise<NodeIdFacts> {
  const path = probedPath(parameters, IDENTITY.id, IDENTITY.path);
  const live = await (ctx.files ?? createHomeFileReader(ctx.home)).read(path);
  if (live === null) return { path, file: 'absent', expectedNode: null, runningFlag: ctx.nodeId };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(live.content);
  } catch {
    return { path, file: 'invalid', expectedNode: null, runningFlag: ctx.nodeId };
  }
  const parsed = parseIdentity(text, path);
  return parsed.ok
    ? { path, file: 'present', expectedNode: parsed.expectedNode, runningFlag: ctx.nodeId }
    : { path, file: 'invalid', expectedNode: null, runningFlag: ctx.nodeId };
}

/** The facts as the node sent them, checked: they crossed the wire. */
function factsOf(value: JsonValue): NodeIdFacts {
  const v = (
    value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
  ) as Record<string, unknown>;
  const { path, file, expectedNode, runningFlag } = v;
  if (
    typeof path !== 'string' ||
    (file !== 'absent' && file !== 'present' && file !== 'invalid') ||
    (expectedNode !== null && typeof expectedNode !== 'string') ||
    typeof runningFlag !== 'string'
  ) {
    throw new FleetError('RESPONSE_INVALID', `${NODE_ID_PROBER}: the node's facts are malformed`);
  }
  return { path, file, expectedNode, runningFlag };
}

function evaluate(value: JsonValue, desired: ProbeDesired): readonly DriftItem[] {
  const facts = factsOf(value);
  const repo = desired.variables['node_id'];
  const base = {
    layer: 'runtime' as const,
    domain: transportIdentityDomain.domain,
    path: facts.path,
  };
  const flag = facts.runningFlag;
  const repoSays =
    repo === undefined ? 'the repo sets no node_id' : `the repo's node_id is ${repo}`;
  if (facts.file === 'invalid') {
    return [
      {
        ...base,
        state: 'diverged',
        detail: `the identity file has no valid expected_node: the controller (--node-id ${flag}) will refuse to start with it; ${repoSays}`,
      },
    ];
  }
  if (facts.file === 'absent') {
    return [
      repo === undefined || repo === flag
        ? {
            ...base,
            state: 'current',
            detail: `no identity file yet; the controller runs with --node-id ${flag}`,
          }
        : {
            ...base,
            state: 'stale',
            detail: `the controller runs with --node-id ${flag} but ${repoSays} (no identity file yet)`,
          },
    ];
  }
  const expected = facts.expectedNode as string;
  if (expected !== flag) {
    return [
      {
        ...base,
        state: 'diverged',
        detail: `expected_node ${expected} disagrees with the running --node-id ${flag}: the controller will refuse to start with this file; ${repoSays}`,
      },
    ];
  }
  if (repo !== undefined && repo !== flag) {
    return [
      {
        ...base,
        state: 'stale',
        detail: `expected_node and the running --node-id are ${flag}, but ${repoSays}: install transport-identity to switch the node`,
      },
    ];
  }
  return [
    {
      ...base,
      state: 'current',
      detail: `expected_node, the running --node-id and the repo agree: ${flag}`,
    },
  ];
}

/** The domain's prober, loaded lazily by the registry (`register.ts`). */
export const nodeIdProber: Prober = { id: NODE_ID_PROBER, layer: 'runtime', collect, evaluate };
