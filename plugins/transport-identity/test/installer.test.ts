/**
 * The transport-identity installer against a fake host (contract §10.2; catalogue 22, 29) — the way a
 * plugin author tests a domain that restarts the controller:
 * - the node half runs on `@fleet/testkit`'s fake host with the controller's own writer
 *   (`host.writer(domain)`);
 * - the controller's supervisor is the seam `ControllerSupervisor`, here a `RecordedSupervisor`
 *   from the testkit: it records every call and "starts" the controller with the recorded
 *   `--node-id`, or fails to, as a controller that exits 1 with the new flag would.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  isFleetError,
  type ControllerSupervisor,
  type Installer,
  type ManagedFile,
  type NodeInstallRequest,
} from '@fleet/core';
import { createFakeHost, RecordedSupervisor, type FakeHost } from '@fleet/testkit';
import { transportIdentityDomain } from '../src/domain.js';
import {
  createTransportIdentityInstaller,
  type TransportIdentityOptions,
} from '../src/installer.js';
import { switchNodeId } from '../src/supervisor.js';

const IDENTITY = '~/.config/fleet/transport.yaml';
const file = transportIdentityDomain.files[0] as ManagedFile;
const identity = (node: string) => `# The node identity.\nexpected_node: ${node}\n`;
const sha256 = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');

async function request(
  host: FakeHost,
  node: string,
  nodeIdVariable = node,
): Promise<NodeInstallRequest> {
  const live = await host.readFile(IDENTITY);
  return {
    operationId: '01JBBBBBBBBBBBBBBBBBBBBBBB',
    domain: 'transport-identity',
    files: [
      {
        fileId: 'transport.yaml',
        path: IDENTITY,
        expectedSha256: live === undefined ? null : sha256(live),
        content: identity(node),
      },
    ],
    parameters: { node_id: nodeIdVariable },
  };
}

async function failure(promise: Promise<unknown>): Promise<{
  code: string;
  message: string;
  actions?: readonly { kind: string; status: string }[];
}> {
  try {
    await promise;
  } catch (error) {
    if (isFleetError(error)) return error;
    throw error;
  }
  throw new Error('expected the install to fail');
}

describe('transport-identity installer: operator half', () => {
  const installer = createTransportIdentityInstaller();

  it('requires YAML whose expected_node is a valid node id', () => {
    expect(installer.check?.(file, identity('node-02'))).to.deep.equal([]);
    expect(installer.check?.(file, 'expected_node: [node-02\n')?.[0]?.message).to.contain(
      'not valid YAML',
    );
    expect(installer.check?.(file, 'node: node-02\n')?.[0]?.message).to.contain('no expected_node');
    expect(installer.check?.(file, 'expected_node: "node 02/.."\n')?.[0]).to.include({ line: 1 });
    expect(installer.check?.(file, 'expected_node: {{ secret.X }}\n')?.[0]?.message).to.contain(
      'secrets',
    );
  });
});

describe('transport-identity installer: node half', () => {
  let host: FakeHost;
  let supervisor: RecordedSupervisor;
  const installerWith = (options: TransportIdentityOptions = {}): Installer =>
    createTransportIdentityInstaller({ supervisor: () => Promise.resolve(supervisor), ...options });

  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01' });
    supervisor = new RecordedSupervisor({ nodeId: 'node-01' });
  });
  afterEach(() => host.dispose());

  it('writes the file and restarts nothing when the node id does not change', async () => {
    const result = await installerWith().install(
      host,
      await request(host, 'node-01'),
      host.writer(transportIdentityDomain),
    );
    expect(result.verified).to.equal(true);
    expect(await host.readText(IDENTITY)).to.equal(identity('node-01'));
    expect(result.actions.map((a) => [a.kind, a.status])).to.deep.equal([
      ['update-supervisor-flag', 'skipped'],
      ['restart-controller', 'skipped'],
      ['verify-node-id', 'ok'],
    ]);
    expect(supervisor.calls).to.deep.equal([]);
  });

  it('changes the node id: file, flag, restart, and the restarted controller reports the new id', async () => {
    const result = await installerWith().install(
      host,
      await request(host, 'node-02'),
      host.writer(transportIdentityDomain),
    );
    expect(result.verified).to.equal(true);
    expect(await host.readText(IDENTITY)).to.equal(identity('node-02'));
    expect(supervisor.calls).to.deep.equal(['record node-02', 'restart node-02']);
    expect(supervisor.running).to.equal('node-02');
    expect(result.actions.map((a) => [a.kind, a.status])).to.deep.equal([
      ['update-supervisor-flag', 'ok'],
      ['restart-controller', 'ok'],
      ['verify-node-id', 'ok'],
    ]);
  });

  it('rolls back when the new controller does not start: file and flag restored, restarted again', async () => {
    await host.writeFile(IDENTITY, identity('node-01'));
    supervisor.failStartWith('node-02');
    const refused = await failure(
      installerWith().install(
        host,
        await request(host, 'node-02'),
        host.writer(transportIdentityDomain),
      ),
    );

    expect(refused.code).to.equal('VERIFICATION_FAILED'); // exit 6; the controller says rolled back
    expect(await host.readText(IDENTITY)).to.equal(identity('node-01'));
    expect(supervisor.calls).to.deep.equal([
      'record node-02',
      'restart node-02',
      'record node-01',
      'restart node-01',
    ]);
    expect(supervisor.running).to.equal('node-01');
    expect(refused.actions?.map((a) => [a.kind, a.status])).to.deep.equal([
      ['update-supervisor-flag', 'rolled-back'],
      ['restart-controller', 'failed'],
      ['restart-controller', 'ok'],
      ['verify-node-id', 'failed'],
    ]);
  });

  it('says manual recovery is required when even the rollback restart fails', async () => {
    supervisor.failStartWith('node-02').failStartWith('node-01');
    const refused = await failure(
      installerWith().install(
        host,
        await request(host, 'node-02'),
        host.writer(transportIdentityDomain),
      ),
    );
    expect(refused.code).to.equal('RECOVERY_REQUIRED');
    expect(refused.message).to.contain('manual recovery');
    expect(await host.exists(IDENTITY)).to.equal(false); // the file it created was removed again
  });

  it('answers "restart pending" when the restart replaces this controller, and switches only once started', async () => {
    supervisor = new RecordedSupervisor({ nodeId: 'node-01', replacesCaller: true });
    const launched: unknown[] = [];
    const installer = installerWith({
      launch: async (plan, seam) => {
        launched.push(plan);
        await switchNodeId(seam, plan);
      },
    });
    const result = await installer.install(
      host,
      await request(host, 'node-02'),
      host.writer(transportIdentityDomain),
    );

    // The answer goes first: nothing restarted yet, the file written, the outcome left to the
    // controller that comes up (the journal's `expect`).
    expect(result.verified).to.equal(false);
    expect(result.pending?.expect).to.deep.equal({ nodeId: 'node-02' });
    expect(result.actions.map((a) => a.status)).to.deep.equal(['pending', 'pending', 'pending']);
    expect(await host.readText(IDENTITY)).to.equal(identity('node-02'));
    expect(supervisor.calls).to.deep.equal([]);

    await result.pending?.start(); // what the controller does once the answer is sent
    expect(launched).to.deep.equal([
      { from: 'node-01', to: 'node-02', operationId: '01JBBBBBBBBBBBBBBBBBBBBBBB' },
    ]);
    expect(supervisor.calls).to.deep.equal(['record node-02', 'restart node-02']);
  });

  it('refuses a node-id change when the node records no supervisor to restart it: nothing written', async () => {
    // The default seam: the supervisor the node recorded (ctx.controllerSupervisor); none here.
    const refused = await failure(
      createTransportIdentityInstaller().install(
        host,
        await request(host, 'node-02'),
        host.writer(transportIdentityDomain),
      ),
    );
    expect(refused.code).to.equal('DOMAIN_BEHAVIOUR_ABSENT');
    expect(refused.message).to.contain('supervisor.json');
    expect(await host.exists(IDENTITY)).to.equal(false);
  });

  it('drives the supervisor the node recorded, never one the request could name', async () => {
    host.controllerSupervisor = () => Promise.resolve(supervisor);
    const result = await createTransportIdentityInstaller().install(
      host,
      {
        ...(await request(host, 'node-02')),
        parameters: { node_id: 'node-02', supervisor: 'lab' },
      },
      host.writer(transportIdentityDomain),
    );
    expect(result.verified).to.equal(true);
    expect(supervisor.calls).to.deep.equal(['record node-02', 'restart node-02']);
  });

  it('runs the switch from outside a supervisor that replaces the controller, once the answer is out', async () => {
    supervisor = new RecordedSupervisor({ nodeId: 'node-01', replacesCaller: true });
    host.controllerSupervisor = () => Promise.resolve(supervisor);
    const result = await createTransportIdentityInstaller().install(
      host,
      await request(host, 'node-02'),
      host.writer(transportIdentityDomain),
    );
    expect(result.pending?.expect).to.deep.equal({ nodeId: 'node-02' });
    expect(supervisor.calls).to.deep.equal([]);
    await result.pending?.start();
    expect(supervisor.calls).to.deep.equal([
      'switch node-01 -> node-02',
      'record node-02',
      'restart node-02',
    ]);
    expect(supervisor.outside[0]).to.deep.include({ switched: true });
  });

  it('refuses, nothing written, when the recorded supervisor cannot switch from outside', async () => {
    const inert = {
      kind: 'inert',
      replacesCaller: true,
      recordNodeId: () => Promise.resolve(),
      restart: () => Promise.reject(new Error('not reached')),
    };
    host.controllerSupervisor = () => Promise.resolve(inert);
    const refused = await failure(
      createTransportIdentityInstaller().install(
        host,
        await request(host, 'node-02'),
        host.writer(transportIdentityDomain),
      ),
    );
    expect(refused.code).to.equal('DOMAIN_BEHAVIOUR_ABSENT');
    expect(await host.exists(IDENTITY)).to.equal(false);
  });

  it("refuses an expected_node that is not the host's node_id: nothing written", async () => {
    const refused = await failure(
      installerWith().install(
        host,
        await request(host, 'node-02', 'node-03'),
        host.writer(transportIdentityDomain),
      ),
    );
    expect(refused.code).to.equal('BAD_REQUEST');
    expect(await host.exists(IDENTITY)).to.equal(false);
    expect(supervisor.calls).to.deep.equal([]);
  });

  it('refuses an identity file without a valid expected_node: nothing written', async () => {
    const bad = await request(host, 'node-02');
    const refused = await failure(
      installerWith().install(
        host,
        { ...bad, files: [{ ...bad.files[0]!, content: 'expected_node: ../../etc\n' }] },
        host.writer(transportIdentityDomain),
      ),
    );
    expect(refused.code).to.equal('FORMAT_UNSUPPORTED');
    expect(await host.exists(IDENTITY)).to.equal(false);
  });
});

describe('switchNodeId', () => {
  it('records, restarts, and checks the flag the supervisor reports', async () => {
    const supervisor = new RecordedSupervisor({ nodeId: 'a' });
    expect(await switchNodeId(supervisor, { from: 'a', to: 'b' })).to.deep.include({
      switched: true,
    });
  });

  it('treats a restart that reports another id as a failure, and rolls back', async () => {
    const calls: string[] = [];
    let recorded = 'a';
    const liar: ControllerSupervisor = {
      kind: 'liar',
      replacesCaller: false,
      recordNodeId: (id) => {
        calls.push(`record ${id}`);
        recorded = id;
        return Promise.resolve();
      },
      restart: () => Promise.resolve({ nodeId: recorded === 'b' ? 'c' : recorded }),
    };
    const outcome = await switchNodeId(liar, { from: 'a', to: 'b' });
    expect(outcome).to.deep.include({ switched: false, rolledBack: true });
    expect(outcome.error).to.contain('--node-id c, not b');
    expect(calls).to.deep.equal(['record b', 'record a']);
  });
});
