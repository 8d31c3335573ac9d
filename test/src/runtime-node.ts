/**
 * A node for runtime lifecycle tests, on a real `systemd --user` manager (test/src/systemd-user.ts):
 * a home of the harness's unprivileged user, a staged generation of the packed runtime artifact,
 * and a real controller running from it as a real unit of the user's manager — installed by the
 * bootstrap-systemd adapter as the user (test/fixtures/runtime-node-setup.mjs), which records it
 * as the node's supervisor. Upgrades, rollbacks and kills go through the real controller, the
 * real runner (a transient unit of its own: the restart of the controller's unit ends the unit's
 * whole control group) and the real manager.
 *
 * Everything on the node runs as its user; the tests read the node's files as root.
 *
 * This module starts a node; the parts are siblings, re-exported here for the suites:
 * runtime-node-expectation.ts (`NODE_ID`, an artifact's hash and commit, the identity a runtime
 * must report), runtime-node-install.ts (the staged generation, the node's policy, its unit),
 * runtime-node-handle.ts (`RuntimeNode`, what a suite holds: its token issuer, client and
 * disposer), runtime-node-transactions.ts (upgrades through the controller, the runner, the
 * receiver's status) and runtime-node-operator.ts (the operator's repository and credentials).
 */
import { randomBytes } from 'node:crypto';
import type { ControllerClient } from '@fleet/core';
import type { SkippableContext } from '@fleet/testkit';
import { packedRuntimeArtifact } from './artifact.js';
import {
  answeringClient,
  nodeDisposer,
  tokenIssuer,
  type RuntimeNode,
} from './runtime-node-handle.js';
import { installNodeUnit, type RuntimeNodeOptions } from './runtime-node-install.js';
import { freePort } from './sshd.js';
import { requireSystemdUser } from './systemd-user.js';

export { NODE_ID, carriedCommit, expectationFor, sha256 } from './runtime-node-expectation.js';
export type { RuntimeNode } from './runtime-node-handle.js';
export { writeRuntimeNodePolicy, type RuntimeNodeOptions } from './runtime-node-install.js';
export { operatorOf } from './runtime-node-operator.js';
export {
  receiverStatus,
  runRunner,
  upgradeThroughController,
  waitForEnd,
} from './runtime-node-transactions.js';

/**
 * In a hook or a test: a node running generation A (the packed runtime) as a unit of the real
 * user manager — or the suite is pending with the reason the machine cannot run one.
 */
export async function startRuntimeNode(
  context: SkippableContext,
  options: RuntimeNodeOptions = {},
): Promise<RuntimeNode> {
  const manager = await requireSystemdUser(context);
  const artifact = await packedRuntimeArtifact();
  const home = manager.makeDir('node');
  const port = await freePort();
  const unit = `fleet-controller-${randomBytes(3).toString('hex')}.service`;
  await installNodeUnit(manager, { home, port, unit, artifact }, options);
  const issueToken = tokenIssuer(manager, home);
  const dispose = nodeDisposer(manager, home, unit);
  let client: ControllerClient;
  try {
    const token = await issueToken('test-operator', [
      'runtime:upgrade',
      'node-admin:bootstrap',
      'versions:read',
    ]);
    client = await answeringClient(manager, unit, port, token);
  } catch (error) {
    // No node to hand back: its unit and home go now (a suite's afterEach never sees them).
    await dispose().catch(() => undefined);
    throw error;
  }
  return {
    manager,
    home,
    port,
    unit,
    client,
    artifact,
    unitState: (properties = ['ActiveState', 'SubState', 'MainPID', 'ExecMainStatus']) =>
      manager.show(unit, properties),
    systemctl: (verb: string) => manager.systemctl(verb, unit),
    issueToken,
    dispose,
  };
}
