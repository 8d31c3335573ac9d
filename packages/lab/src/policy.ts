/**
 * A lab node's policy (contract §5.1, §13; docs/node-policy.md):
 * `<home>/.config/fleet/node-policy.yaml` serving the three config domains at their declared
 * paths and the files domain where {@link LAB_FILES_PATTERNS} match, `fleet version` allowed to
 * probe the tools the lab repo names (node, git), bootstrap allowed through the supervisor that
 * runs the node (contract §12: a lab is a sandbox) for runtimes signed by the lab's release key
 * (ADR 0019), and that supervisor: the lab supervisor's
 * control socket, or the node's unit under `lab up --supervisor systemd-user`; under the lab
 * supervisor, the operator's linked plugins as dev plugins (dev-plugins.ts). Coupled actions only
 * as `fleet lab up --node-actions FILE` names them (node-actions.ts), else none: a lab that wants
 * one later defines it in its nodes' policies, as an operator would on a real node. `fleet lab up`
 * writes it once, when the node has none: a lab brought up again keeps whatever its policy says by
 * then.
 */
import { defaultNodePolicy, isFleetError, nodePolicyFile, type NodePolicyInput } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { devPluginSection, type LabDevPlugin } from './dev-plugins.js';
import { withNodeActions, type LabNodeActions } from './node-actions.js';
import type { LabNodeSupervisor } from './node-supervisor.js';

/** The domains every lab host serves (contract §13). */
export const LAB_DOMAINS = ['router', 'transport-identity', 'harness-policy', 'files'] as const;

/**
 * Where a lab node lets the files domain write (contract §10.4): the demo entry's directory and
 * `~/.gitconfig`, the dotfile the README's walkthrough manages.
 */
export const LAB_FILES_PATTERNS = ['~/.config/fleet-demo/**', '~/.gitconfig'] as const;

/** The tools the lab repo's fleet.yaml asks `fleet version` to probe (`probes.tools`). */
export const LAB_TOOLS = ['node', 'git'] as const;

export type { LabNodeSupervisor } from './node-supervisor.js';

/**
 * The policy of a lab node run by `supervisor`, trusting `trustedKeys` (the lab's release signing
 * key, ADR 0019): a lab's runtime changes take the signed path, as on any node.
 */
export function labNodePolicy(
  supervisor: LabNodeSupervisor,
  trustedKeys: readonly string[],
  devPlugins: readonly LabDevPlugin[] = [],
  nodeActions: LabNodeActions = {},
): NodePolicyInput {
  const policy = defaultNodePolicy([...LAB_DOMAINS, ...devPlugins.flatMap((p) => p.domains)], {
    tools: LAB_TOOLS,
    bootstrap: { allow: true, supervisors: [supervisor.kind] },
    supervisor,
  });
  return withNodeActions(
    {
      ...policy,
      domains: { ...policy.domains, files: { patterns: [...LAB_FILES_PATTERNS] } },
      runtime: { trustedKeys: [...trustedKeys], allowUnsigned: false },
      ...devPluginSection(supervisor, devPlugins),
    },
    nodeActions,
  );
}

/**
 * Writes the lab's policy into `home` (mode 0600, parents 0700) unless one is there; returns its
 * path. Written whole to a temp file and linked into place: never half a file, never replacing.
 */
export async function writeLabNodePolicy(
  home: string,
  supervisor: LabNodeSupervisor,
  trustedKeys: readonly string[],
  devPlugins: readonly LabDevPlugin[] = [],
  nodeActions: LabNodeActions = {},
): Promise<string> {
  try {
    return await writeNodePolicy(
      home,
      labNodePolicy(supervisor, trustedKeys, devPlugins, nodeActions),
    );
  } catch (error) {
    if (isFleetError(error) && error.code === 'INIT_TARGET_NOT_EMPTY') return nodePolicyFile(home);
    throw error;
  }
}
