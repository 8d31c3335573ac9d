/**
 * The lab's dev loop (contract §13, docs/plugin-authoring.md "The dev loop"): the plugins linked
 * into the operator's CLI (`fleet plugins link`) are served by the lab's nodes straight from their
 * folders, so an author rebuilds and runs `fleet lab restart` instead of packing, pinning, building
 * a runtime and upgrading — Terraform's `dev_overrides` plays that part for providers.
 *
 * `fleet lab up` is the only writer: it lists them in each lab node's policy (`lab.devPlugins`,
 * with their domains served), which the schema accepts only beside `supervisor: { kind: lab }`, and
 * the controller loads them only when the lab supervisor visibly runs it
 * (packages/controller/src/serve/dev-plugins.ts). A real node, enrolled or bootstrapped, runs only
 * what its signed runtime carries. A lab of systemd units (`--supervisor systemd-user`) has real
 * units and takes the real path too: it serves no dev plugin.
 */
import {
  isFleetError,
  nodePolicyFile,
  readNodePolicyFile,
  type NodeLabPolicy,
  type NodePolicy,
  type Registry,
} from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import type { LabNodeSupervisor } from './node-supervisor.js';

/** A plugin linked into the operator's CLI, and the domains it provides. */
export interface LabDevPlugin {
  readonly name: string;
  /** Its folder (the link's target): the lab controller imports its built code from there. */
  readonly root: string;
  readonly domains: readonly string[];
}

/** What the CLI knows of one of its plugins (oclif's `config.plugins`). */
export interface CliPlugin {
  readonly name: string;
  readonly root: string;
  /** oclif's plugin type: `link` for `fleet plugins link`. */
  readonly type: string;
}

/**
 * The linked plugins that provide a domain the registry accepted (pure): a linked plugin the
 * registry refused, or one with commands only, is no dev plugin.
 */
export function linkedDevPlugins(
  plugins: readonly CliPlugin[],
  registry: Pick<Registry, 'domains'>,
): LabDevPlugin[] {
  const domains = registry.domains();
  return plugins
    .filter((plugin) => plugin.type === 'link')
    .map((plugin) => ({
      name: plugin.name,
      root: plugin.root,
      domains: domains
        .filter((entry) => entry.plugin.name === plugin.name)
        .map((entry) => entry.descriptor.domain)
        .sort(),
    }))
    .filter((plugin) => plugin.domains.length > 0)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The policy's `lab` section for `devPlugins` (pure): only a lab-supervised node has one. */
export function devPluginSection(
  supervisor: LabNodeSupervisor,
  devPlugins: readonly LabDevPlugin[],
): { lab?: NodeLabPolicy } {
  if (supervisor.kind !== 'lab' || devPlugins.length === 0) return {};
  return { lab: { devPlugins: devPlugins.map(({ name, root }) => ({ name, root })) } };
}

/**
 * `policy` with its `lab` section set to `devPlugins` and their domains served (pure); `null` when
 * it already says so. Never removes a served domain: the node's policy may serve it for another
 * reason (a runtime that carries the plugin).
 */
export function withDevPlugins(
  policy: NodePolicy,
  devPlugins: readonly LabDevPlugin[],
): NodePolicy | null {
  if (policy.supervisor?.kind !== 'lab') return null;
  const section = devPluginSection(policy.supervisor, devPlugins).lab;
  const missing = devPlugins
    .flatMap((plugin) => plugin.domains)
    .filter((domain) => !Object.hasOwn(policy.domains, domain));
  if (JSON.stringify(section) === JSON.stringify(policy.lab) && missing.length === 0) return null;
  const { lab: _previous, ...rest } = policy;
  const next: NodePolicy = {
    ...rest,
    domains: {
      ...policy.domains,
      ...Object.fromEntries(missing.map((domain) => [domain, { unattended: 'deny' as const }])),
    },
  };
  return section === undefined ? next : { ...next, lab: section };
}

/**
 * Brings the policy of a lab node brought up again up to date with the plugins linked now (the
 * lab's own section only, see {@link withDevPlugins}); true when it rewrote the file. A node whose
 * policy is missing, unreadable or not a lab supervisor's is left as it is: its controller says why
 * at its start.
 */
export async function syncLabDevPlugins(
  home: string,
  devPlugins: readonly LabDevPlugin[],
): Promise<boolean> {
  let policy: NodePolicy;
  try {
    ({ policy } = await readNodePolicyFile(nodePolicyFile(home), home));
  } catch (error) {
    if (isFleetError(error)) return false;
    throw error;
  }
  const next = withDevPlugins(policy, devPlugins);
  if (next === null) return false;
  await writeNodePolicy(home, next, { force: true });
  return true;
}
