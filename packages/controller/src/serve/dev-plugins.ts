/**
 * A lab node's dev plugins (contract §13, docs/plugin-authoring.md "The dev loop"): the plugins
 * `fleet plugins link`ed into the operator's CLI that a lab controller loads straight from their
 * folders, so an author's rebuilt plugin is served after `fleet lab restart` — no pack, pin,
 * runtime build or upgrade. Terraform's `dev_overrides` plays the same part for providers.
 *
 * A real node never does this: it loads only what its signed runtime generation carries
 * (carried-plugins.ts). The list comes from the node's own policy (`lab.devPlugins`), which only
 * `fleet lab up` writes and whose schema refuses it without `supervisor: { kind: lab }`; and it is
 * used only when this process is visibly the lab's — its home is `DIR/nodes/<host>/home`, the
 * policy's supervisor socket is `DIR/nodes/<host>/supervisor.sock` beside it (the lab's layout,
 * packages/lab/src/layout.ts), and the lab supervisor that started it handed it that socket in
 * `FLEET_LAB_SUPERVISOR`. Anything else refuses the dev plugins on stderr, naming the reason.
 */
import { dirname, join, resolve } from 'node:path';
import {
  isFleetError,
  nodePolicyFile,
  readNodePolicyFile,
  type NodePolicy,
} from '@fleet/core/node';

/**
 * `@fleet/lab`'s `LAB_SUPERVISOR_ENV` (supervisor-protocol.ts), named again here because the lab
 * depends on the controller, not the other way: the lab supervisor sets it.
 */
const LAB_SUPERVISOR_ENV = 'FLEET_LAB_SUPERVISOR';

/** One dev plugin a lab node's policy names. */
export interface DevPlugin {
  readonly name: string;
  readonly root: string;
}

export interface DevPlugins {
  readonly plugins: readonly DevPlugin[];
  /** Why the policy's dev plugins are not loaded (one line for stderr), when they are not. */
  readonly refused?: string;
}

/**
 * Why the controller with home `home` and environment `env` is not the lab node `policy` says it
 * is; `null` when it is (pure).
 */
export function labNodeProblem(
  policy: Pick<NodePolicy, 'supervisor'>,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  const supervisor = policy.supervisor;
  if (supervisor?.kind !== 'lab') return 'its policy names no lab supervisor';
  const expected = join(dirname(resolve(home)), 'supervisor.sock');
  if (resolve(supervisor.socket) !== expected) {
    return `its policy's lab supervisor socket ${supervisor.socket} is not the lab's ${expected}`;
  }
  if (env[LAB_SUPERVISOR_ENV] !== supervisor.socket) {
    return `it was not started by that lab supervisor (${LAB_SUPERVISOR_ENV} is ${env[LAB_SUPERVISOR_ENV] === undefined ? 'unset' : JSON.stringify(env[LAB_SUPERVISOR_ENV])})`;
  }
  return null;
}

/**
 * The dev plugins the node at `home` loads: none without a readable policy with a `lab` section
 * (the controller's own policy load then reports any problem), and none — with the reason — when
 * this process is not that lab node.
 */
export async function labDevPlugins(
  home: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<DevPlugins> {
  let policy: NodePolicy;
  try {
    ({ policy } = await readNodePolicyFile(nodePolicyFile(home), home));
  } catch (error) {
    if (isFleetError(error)) return { plugins: [] };
    throw error;
  }
  const listed = policy.lab?.devPlugins ?? [];
  if (listed.length === 0) return { plugins: [] };
  const problem = labNodeProblem(policy, home, env);
  if (problem === null) return { plugins: listed };
  return {
    plugins: [],
    refused: `warning: the lab dev plugins ${listed.map((p) => p.name).join(', ')} are refused: this controller is not a lab node (${problem}); a node loads only the plugins its runtime carries`,
  };
}
