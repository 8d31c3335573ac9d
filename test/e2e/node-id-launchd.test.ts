/**
 * The coupled `--node-id` change of a Mac node through launchd (contract §10.2, ADR 0020, ADR 0022):
 * `fleet config install node-01 transport-identity` after the repository renamed the node. The
 * controller answers `restart pending`, and a job of its own (`dev.fleet.job.node-id-switch`, which
 * the agent's bootout cannot end) records the new `--node-id` in the agent's `ProgramArguments`
 * and restarts the controller once — the changed plist bootstrapped anew, no kickstart after it —
 * then the restarted controller settles the operation and the operator checks who answers. A new
 * id whose controller cannot start is rolled back: the old `ProgramArguments`, the identity file
 * restored, exit 6.
 *
 * The node is a real bootstrapped one (test/src/launchd-node.ts): the real packed runtime under
 * the testkit's strict fake `launchctl`, every fleet process on it reporting darwin. What this
 * does not prove: the real launchd, Node on macOS.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { receiptSchema, type Receipt } from '@fleet/core';
import { json, waitFor, type FleetRun } from '../src/fleet.js';
import { bootstrappedMacNode, LAUNCHD_LABEL, type MacNode } from '../src/launchd-node.js';
import { NODE_ID } from '../src/runtime-node.js';
import { requireSshd } from '../src/sshd.js';

const IDENTITY = '.config/fleet/transport.yaml';
const SWITCH_LOG = '.local/state/fleet/logs/transport-identity.log';
/** A controller started with this id fails at its start (the agent's FLEET_FAILPOINT). */
const BROKEN = 'node-01-broken';

describe('a node-id change on a Mac: one restart through launchd, rolled back when not accepted', function () {
  this.timeout(900_000);
  let node: MacNode;

  const plistArgv = async (): Promise<string[]> => {
    const text = await readFile(node.agentPlist, 'utf8');
    const array = /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(text)?.[1] ?? '';
    return [...array.matchAll(/<string>([^<]*)<\/string>/g)].map((m) => m[1] as string);
  };
  const flagOf = (argv: readonly string[]) => argv[argv.indexOf('--node-id') + 1];
  const switchOutcomes = async (): Promise<string[]> =>
    (await readFile(join(node.host.home, SWITCH_LOG), 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => /"switched":/.test(line));
  /** The launchd verbs about the controller's agent since call `from`. */
  const agentCalls = async (from: number): Promise<string[][]> =>
    (await node.host.calls('launchd'))
      .slice(from)
      .filter((argv) => argv.some((a) => a.includes(LAUNCHD_LABEL)));

  async function renameTo(nodeId: string): Promise<void> {
    await writeFile(join(node.repo, 'hosts', `${NODE_ID}.yaml`), `node_id: ${nodeId}\n`);
    node.git('commit', '-qam', `${NODE_ID}: node id ${nodeId}`);
  }
  async function install(): Promise<{ run: FleetRun; receipt?: Receipt }> {
    const done = await node.run([
      'config',
      'install',
      NODE_ID,
      'transport-identity',
      '--confirm',
      '--json',
    ]);
    const body = JSON.parse(done.stdout || '{}') as { receipt?: unknown };
    return { run: done, ...(body.receipt ? { receipt: receiptSchema.parse(body.receipt) } : {}) };
  }

  before(async function () {
    requireSshd(this);
    node = await bootstrappedMacNode({
      domains: ['transport-identity'],
      scopes: ['config:read', 'config:install'],
      files: {
        'domains/transport-identity/transport.yaml':
          "# The node identity: must equal the controller's --node-id.\nexpected_node: {{ host.node_id }}\n",
      },
    });
    // As the node's owner would: the agent's environment arms the failpoint (it fires only in a
    // controller started with BROKEN), the agent booted out and bootstrapped again.
    await node.armFailpoint(`controller.start@${BROKEN}:throw`);
    expect(await readFile(node.agentPlist, 'utf8')).to.contain(`controller.start@${BROKEN}:throw`);
  });

  after(async () => {
    await node?.dispose();
  });

  it('changes the node id: the agent runs the new --node-id after exactly one restart, and it answers', async () => {
    const before = await node.client().identity();
    expect(before).to.include({ nodeId: NODE_ID, nodeIdFlag: NODE_ID });
    const calls = (await node.host.calls('launchd')).length;
    await renameTo('node-01-renamed');

    const { run: done, receipt } = await install();
    expect(done.exitCode, done.stdout + done.stderr).to.equal(0);
    expect(done.stderr).to.contain('pending');
    expect(receipt).to.include({ outcome: 'installed', verified: true, host: 'node-01-renamed' });
    expect(receipt?.actions.map((a) => [a.kind, a.status])).to.deep.equal([
      ['update-supervisor-flag', 'ok'],
      ['restart-controller', 'ok'],
      ['verify-node-id', 'ok'],
    ]);
    const after = await node.client().identity();
    expect(after).to.include({ nodeId: 'node-01-renamed', nodeIdFlag: 'node-01-renamed' });
    expect(after.pid).to.not.equal(before.pid);
    expect(flagOf(await plistArgv())).to.equal('node-01-renamed');
    expect(await readFile(join(node.host.home, IDENTITY), 'utf8')).to.match(
      /^expected_node: node-01-renamed$/m,
    );

    // The switch (a job of its own) has seen it through: and the controller that answered the
    // install is still the one launchd runs — no second restart after the answer.
    await waitFor(
      async () => (await switchOutcomes()).length === 1,
      60_000,
      'the switch to log its outcome',
    );
    expect((await switchOutcomes())[0]).to.contain('"switched":true');
    expect((await node.printed()).pid).to.equal(after.pid);
    expect((await node.client().identity()).pid).to.equal(after.pid);
    const verbs = (await agentCalls(calls)).map((argv) => argv[1]);
    expect(verbs.filter((verb) => verb === 'bootstrap')).to.have.length(1);
    expect(verbs).to.not.include('kickstart');
  });

  // The switch sees the new id's controller failed while KeepAlive is about to start it again,
  // and the rollback boots the agent out right then: launchd unloads it, as the fake does
  // (packages/testkit/test/fake-launchctl.test.ts, docs/reliability.md case 98).
  it('a new id whose controller cannot start is rolled back: exit 6, the old --node-id runs again', async () => {
    const before = await node.client().identity();
    const identity = await readFile(join(node.host.home, IDENTITY), 'utf8');
    await renameTo(BROKEN);

    const { run: done, receipt } = await install();
    expect(done.exitCode, done.stdout + done.stderr).to.equal(6);
    expect(receipt).to.include({
      outcome: 'rolled-back',
      verified: false,
      host: 'node-01-renamed',
    });
    expect(receipt?.error?.code).to.equal('VERIFICATION_FAILED');
    expect(receipt?.files.map((f) => f.state)).to.deep.equal(['restored']);

    await waitFor(
      async () => (await switchOutcomes()).length === 2,
      60_000,
      'the switch to log its outcome',
    );
    const outcome = (await switchOutcomes())[1] ?? '';
    expect(outcome, outcome).to.contain('"switched":false').and.contain('"rolledBack":true');
    expect(outcome).to.match(/reports the controller failed/);
    const after = await node.client().identity();
    expect(after).to.include({ nodeId: 'node-01-renamed', nodeIdFlag: 'node-01-renamed' });
    expect(after.pid).to.not.equal(before.pid);
    expect((await node.printed()).pid).to.equal(after.pid);
    expect(flagOf(await plistArgv())).to.equal('node-01-renamed');
    expect(await readFile(join(node.host.home, IDENTITY), 'utf8')).to.equal(identity);
    // The repository still names BROKEN: drift says the node runs another id.
    const drift = await node.run([
      'drift',
      '--host',
      NODE_ID,
      '--domain',
      'transport-identity',
      '--json',
    ]);
    const runtime = json<{ hosts: { items: { layer: string; state: string }[] }[] }>(
      drift,
    ).hosts[0]?.items.find((i) => i.layer === 'runtime');
    expect(runtime?.state).to.equal('stale');
  });
});
