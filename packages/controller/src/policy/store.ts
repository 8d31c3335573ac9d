/**
 * The node policy as the controller holds it (contract §5.1, docs/node-policy.md).
 *
 * - At start: the file must exist and be valid against this node's plugins, or the controller
 *   does not start (`NODE_POLICY_MISSING` naming `fleet node-policy init --home …`,
 *   `NODE_POLICY_INVALID` / `NODE_POLICY_INSECURE` with file, line and field). A node that has
 *   only the old `~/.local/state/fleet/bootstrap-policy.json` is migrated once (migrate.ts).
 * - While it runs: every request stats the file; when its device, inode, size, mtime or ctime
 *   changed it is read again. A valid new version applies from the next request on; an invalid
 *   one closes the node — nothing is served, run or written until the file is fixed, health says
 *   why — never the old version silently kept.
 *
 * Each request works on one version from start to end (`current()` returns an immutable view).
 */
import { lstatSync } from 'node:fs';
import {
  FleetError,
  NODE_POLICY_VERSION,
  checkNodePolicy,
  isFleetError,
  nodePolicyFile,
  nodePolicySchema,
  readNodePolicyFile,
  type LoadedNodePolicy,
  type NodePolicy,
  type NodePolicyStamp,
  type Registry,
} from '@fleet/core/node';
import { Allowlist } from '../allowlist.js';
import { migrateBootstrapPolicy } from './migrate.js';

/** One version of the policy, with the allowlist built from it. */
export interface PolicyView {
  /** The file as read; `null` when the node is closed (see `problem`). */
  readonly loaded: LoadedNodePolicy | null;
  readonly policy: NodePolicy;
  readonly allowlist: Allowlist;
  /** Why the node serves nothing right now (the file changed and is missing or invalid). */
  readonly problem: FleetError | null;
}

/** A policy that allows nothing: what a closed node answers with. */
const CLOSED: NodePolicy = nodePolicySchema.parse({ version: NODE_POLICY_VERSION });

export interface LoadNodePolicyInput {
  readonly home: string;
  readonly registry: Pick<Registry, 'domains'>;
  /** Told when the old bootstrap policy was migrated (the controller audits it). */
  readonly onMigrated?: (detail: string) => void | Promise<void>;
}

/**
 * Reads `home`'s policy (migrating the old bootstrap policy first when it is the only one) and
 * checks it against the registry's domains; throws with every problem (file, line, field).
 */
export async function loadNodePolicy(input: LoadNodePolicyInput): Promise<LoadedNodePolicy> {
  const migrated = await migrateBootstrapPolicy(input.home, input.registry);
  if (migrated !== null) await input.onMigrated?.(migrated);
  const loaded = await readNodePolicyFile(nodePolicyFile(input.home), input.home);
  const problems = checkNodePolicy(
    loaded.policy,
    input.registry.domains().map((entry) => entry.descriptor),
    loaded.file,
    loaded.lineOf,
  );
  if (problems.length > 0) {
    throw new FleetError('NODE_POLICY_INVALID', `${loaded.file} does not fit this node's plugins`, {
      problems,
    });
  }
  return loaded;
}

function sameStamp(a: NodePolicyStamp, b: NodePolicyStamp): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs
  );
}

function viewOf(registry: Pick<Registry, 'domains'>, loaded: LoadedNodePolicy): PolicyView {
  return {
    loaded,
    policy: loaded.policy,
    allowlist: new Allowlist(registry, loaded.policy),
    problem: null,
  };
}

function closedView(registry: Pick<Registry, 'domains'>, problem: FleetError): PolicyView {
  return {
    loaded: null,
    policy: CLOSED,
    allowlist: new Allowlist(registry, CLOSED, problem),
    problem,
  };
}

export class NodePolicyStore {
  private view: PolicyView;
  /** The stamp of the last file looked at, valid or not (so a broken file is not re-read each time). */
  private stamp: NodePolicyStamp | null;

  private constructor(
    private readonly home: string,
    private readonly registry: Pick<Registry, 'domains'>,
    loaded: LoadedNodePolicy,
  ) {
    this.view = viewOf(registry, loaded);
    this.stamp = loaded.stamp;
  }

  /** Loads the policy at start: throws, and the controller does not start, if it is not usable. */
  static async open(input: LoadNodePolicyInput): Promise<NodePolicyStore> {
    return new NodePolicyStore(input.home, input.registry, await loadNodePolicy(input));
  }

  /** A store over an already loaded policy (the SSH receiver, tests). */
  static of(
    home: string,
    registry: Pick<Registry, 'domains'>,
    loaded: LoadedNodePolicy,
  ): NodePolicyStore {
    return new NodePolicyStore(home, registry, loaded);
  }

  /** The last view, without looking at the file. */
  latest(): PolicyView {
    return this.view;
  }

  /**
   * The policy as it is on disk now: read again when the file changed. Its lstat, on every
   * request, is synchronous (a few microseconds; a thread-pool round trip costs several times
   * that: contract §14).
   */
  async current(): Promise<PolicyView> {
    const file = nodePolicyFile(this.home);
    let stamp: NodePolicyStamp | null;
    try {
      const stats = lstatSync(file);
      stamp = {
        dev: stats.dev,
        ino: stats.ino,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        ctimeMs: stats.ctimeMs,
      };
    } catch {
      stamp = null;
    }
    if (stamp !== null && this.stamp !== null && sameStamp(stamp, this.stamp)) return this.view;
    if (stamp === null && this.stamp === null) return this.view;
    this.stamp = stamp;
    try {
      const loaded = await readNodePolicyFile(file, this.home);
      const problems = checkNodePolicy(
        loaded.policy,
        this.registry.domains().map((entry) => entry.descriptor),
        loaded.file,
        loaded.lineOf,
      );
      if (problems.length > 0) {
        throw new FleetError('NODE_POLICY_INVALID', `${file} does not fit this node's plugins`, {
          problems,
        });
      }
      this.view = viewOf(this.registry, loaded);
    } catch (error) {
      this.view = closedView(
        this.registry,
        closedError(
          isFleetError(error)
            ? (error as FleetError)
            : new FleetError('NODE_POLICY_INVALID', `${file}: ${String(error)}`),
        ),
      );
    }
    return this.view;
  }
}

/** The error a closed node answers with: the policy's problem, first problem line included. */
function closedError(error: FleetError): FleetError {
  const first = error.problems[0];
  const where = first
    ? `: ${[first.file, first.line].filter((p) => p !== undefined).join(':')}${first.path ? ` ${first.path}` : ''}: ${first.message}`
    : '';
  return new FleetError(
    error.code,
    `${error.message}${where}; this node serves nothing until its policy is fixed`,
    { problems: error.problems, suggestions: error.suggestions },
  );
}
