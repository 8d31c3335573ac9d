/**
 * An install whose coupled action replaces the controller itself (core `PendingRestart`, contract
 * §10.2; catalogue 22, 29): answered `restart pending` and journaled; the action starts only after
 * the answer; the controller that comes up settles it — completed when it runs with the expected
 * `--node-id`, every written file restored (rolled back) when it does not. And the fail-closed
 * coupling: a controller whose `--node-id` disagrees with the identity file does not start.
 * Plus the snapshot's probers (drift's derived and runtime layers in the same request).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  defineRegistration,
  parseYaml,
  resolveSecrets,
  type Installer,
  type OperationStatusResponse,
  type Receipt,
  type SnapshotResponse,
} from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';
import { createController } from '../src/index.js';
import { fixtureRegistration } from './support/fixture-registry.js';
import { install } from './support/install.js';
import { newId, startNode, type TestNode } from './support/node.js';

const IDENTITY = '~/.config/fleet/transport.yaml';
const identity = (node: string) => `expected_node: ${node}\n`;

/** The restarts the fixture installer asked for, in order (what `PendingRestart.start` did). */
const started: string[] = [];

/** A transport-identity stand-in: writes the file; a new id is a restart pending after the answer. */
const identityInstaller: Installer = {
  domain: 'transport-identity',
  view: (_file, rendered) => rendered,
  managed: (_file, live) => live,
  async install(ctx, request, writer) {
    const [file] = request.files;
    if (!file) throw new Error('no file');
    const text = resolveSecrets(file.content, await ctx.secrets(), file.path);
    const to = String(
      (parseYaml(text, file.path, 'BAD_REQUEST').value as { expected_node: string }).expected_node,
    );
    const result = await writer.replace({
      path: file.path,
      expectedSha256: file.expectedSha256,
      content: new TextEncoder().encode(text),
    });
    if (to === ctx.nodeId) return { files: [result], actions: [], verified: true };
    return {
      files: [result],
      actions: [
        { kind: 'restart-controller', status: 'pending', detail: `restart with --node-id ${to}` },
      ],
      verified: false,
      pending: {
        expect: { nodeId: to },
        detail: `restart pending: --node-id ${ctx.nodeId} -> ${to}`,
        start: () => {
          started.push(to);
        },
      },
    };
  },
};

async function identityRegistry() {
  const registration = defineRegistration({
    installers: [
      {
        domain: 'transport-identity',
        description: 'identity file (test stand-in)',
        files: [
          {
            id: 'transport.yaml',
            path: IDENTITY,
            canonical: 'transport.yaml',
            kind: 'whole',
            format: 'yaml',
          },
        ],
        hostVariables: ['node_id'],
        coupling: {
          kind: 'process',
          actions: [{ kind: 'restart-controller', description: 'restart' }],
        },
        load: () => Promise.resolve(identityInstaller),
      },
    ],
  });
  return registryFromHooks([
    {
      plugin: { name: '@fleet/plugin-fixture', version: '1.2.3', type: 'core' },
      hook: () => fixtureRegistration,
    },
    {
      plugin: { name: '@fleet/plugin-identity-fixture', version: '0.0.1', type: 'core' },
      hook: () => registration,
    },
  ]);
}

async function auditFor(node: TestNode, id: string): Promise<Record<string, unknown>[]> {
  const text = (await node.read('~/.local/state/fleet/audit.jsonl'))?.toString('utf8') ?? '';
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record['operationId'] === id);
}

describe('controller: an install settled by the restarted controller', () => {
  let node: TestNode;
  let token: string;
  beforeEach(async () => {
    started.length = 0;
    node = await startNode({ registry: await identityRegistry() });
    token = await node.issue(['config:install', 'config:read']);
    await node.write(IDENTITY, identity('node-01'));
  });
  afterEach(() => node.dispose());

  async function statusOf(id: string): Promise<OperationStatusResponse> {
    return (await node.call(`/v1/operations/${id}`, { token })).body as OperationStatusResponse;
  }

  async function pendingInstall(): Promise<{ id: string; receipt: Receipt }> {
    const id = newId();
    const answer = await install(
      node,
      token,
      'transport-identity',
      [{ path: IDENTITY, fileId: 'transport.yaml', content: identity('node-02') }],
      { operationId: id },
    );
    expect(answer.status, answer.text).to.equal(200);
    return { id, receipt: answer.body as Receipt };
  }

  it('answers "restart pending", journals it, and starts the restart only after the answer', async () => {
    const { id, receipt } = await pendingInstall();
    expect(receipt).to.include({ outcome: 'installed', verified: false });
    expect(receipt.actions).to.deep.equal([
      { kind: 'restart-controller', status: 'pending', detail: 'restart with --node-id node-02' },
    ]);
    expect((await node.read(IDENTITY))?.toString()).to.equal(identity('node-02'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started).to.deep.equal(['node-02']);

    const status = await statusOf(id);
    expect(status).to.deep.include({ state: 'in-progress' });
    expect(status.receipt?.operationId).to.equal(id);
    expect(await readdir(join(node.home, '.local/state/fleet/journal'))).to.include(`${id}.jsonl`);
    // The path stays locked until the restarted controller settles it.
    const second = await install(node, token, 'transport-identity', [
      { path: IDENTITY, fileId: 'transport.yaml', content: identity('node-03') },
    ]);
    expect((second.body as { error: { code: string } }).error.code).to.equal('LOCKED');
  });

  it('is completed and verified by a controller that comes up with the expected --node-id', async () => {
    const { id } = await pendingInstall();
    await node.restart({ nodeId: 'node-02' });

    const status = await statusOf(id);
    expect(status).to.deep.include({ state: 'completed' });
    expect(status.receipt).to.deep.include({
      outcome: 'installed',
      verified: true,
      host: 'node-02',
    });
    expect(status.receipt?.actions[0]).to.include({ kind: 'restart-controller', status: 'ok' });
    const records = await auditFor(node, id);
    expect(records.map((r) => r['outcome'])).to.deep.equal(['ok', 'ok']);
    expect(String(records[1]?.['detail'])).to.contain('restart settled');
    expect(await readdir(join(node.home, '.local/state/fleet/journal'))).not.to.include(
      `${id}.jsonl`,
    );
  });

  it('is rolled back by a controller that comes up with the old --node-id: the file restored first', async () => {
    const { id } = await pendingInstall();
    // The new controller never started; its supervisor restarted the old flag.
    await node.restart({ nodeId: 'node-01' });

    expect((await node.read(IDENTITY))?.toString()).to.equal(identity('node-01'));
    const status = await statusOf(id);
    expect(status).to.deep.include({ state: 'failed' });
    expect(status.receipt).to.deep.include({
      outcome: 'rolled-back',
      verified: false,
      host: 'node-01',
    });
    expect(status.receipt?.error?.code).to.equal('VERIFICATION_FAILED');
    expect(status.receipt?.files[0]).to.include({ path: IDENTITY, state: 'restored' });
    expect((await auditFor(node, id)).map((r) => r['outcome'])).to.deep.equal([
      'ok',
      'rolled-back',
    ]);
  });

  it('does not settle as verified a controller that fails before it serves', async () => {
    const { id } = await pendingInstall();
    await node.controller.close();
    process.env['FLEET_FAILPOINT'] = 'controller.start@node-02:throw';
    try {
      let failed = false;
      try {
        await createController({
          home: node.home,
          nodeId: 'node-02',
          registry: await identityRegistry(),
        });
      } catch (error) {
        failed = (error as { code?: string }).code === 'IO_ERROR';
      }
      expect(failed).to.equal(true);
    } finally {
      delete process.env['FLEET_FAILPOINT'];
    }
    // Still pending: the journal is there for the controller that does come up.
    expect(await readdir(join(node.home, '.local/state/fleet/journal'))).to.include(`${id}.jsonl`);
    await node.restart({ nodeId: 'node-01' });
    const status = await statusOf(id);
    expect(status.receipt?.outcome).to.equal('rolled-back');
  });

  it('refuses to start when --node-id disagrees with expected_node (fail closed)', async () => {
    await node.controller.close();
    try {
      await createController({
        home: node.home,
        nodeId: 'node-09',
        registry: await identityRegistry(),
      });
      expect.fail('expected NODE_ID_MISMATCH');
    } catch (error) {
      expect((error as { code?: string }).code).to.equal('NODE_ID_MISMATCH');
      expect((error as Error).message).to.contain('expected_node "node-01"');
    }
    await node.restart({ nodeId: 'node-01' }); // the agreeing id starts
    expect((await node.call('/v1/identity', { token })).body).to.include({
      nodeId: 'node-01',
      nodeIdFlag: 'node-01',
    });
  });
});

describe('controller: probers in the snapshot request', () => {
  let node: TestNode;
  let token: string;
  before(async () => {
    node = await startNode();
    token = await node.issue(['config:read']);
  });
  after(() => node.dispose());

  it('answers each prober in the same response, redacted; a failing prober does not fail the rest', async () => {
    const answer = await node.call('/v1/snapshot', {
      token,
      body: {
        files: [{ domain: 'fixture', path: '~/.config/fixture/app.conf' }],
        backups: false,
        probes: [
          { prober: 'fixture.facts', parameters: {} },
          { prober: 'no.such', parameters: {} },
          { prober: 'fixture.absent', parameters: {} },
          { prober: 'supervisor.unit', parameters: {} },
          { prober: 'tools.versions', parameters: {} },
        ],
      },
    });
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.text).not.to.contain(node.canary);
    const body = answer.body as SnapshotResponse;
    const [facts, unknown, absent, supervision, versions] = body.probes ?? [];
    expect(facts).to.deep.include({ prober: 'fixture.facts', state: 'ok', layer: 'file' });
    expect(facts?.state === 'ok' ? facts.facts : null).to.deep.include({
      canary: '{{ secret.CANARY }}',
    });
    expect(unknown).to.include({ state: 'error', code: 'UNKNOWN_DOMAIN' });
    expect(absent).to.include({ state: 'error', code: 'DOMAIN_BEHAVIOUR_ABSENT' });
    // A supervisor's runtime facts are the controller's own supervision: a read token sees them
    // (contract §5); a version prober still needs versions:read.
    expect(supervision).to.include({ prober: 'supervisor.unit', state: 'ok', layer: 'runtime' });
    expect(versions).to.include({ state: 'error', code: 'SCOPE_DENIED' });
    expect(body.files[0]).to.include({ path: '~/.config/fixture/app.conf' });
  });

  it('answers without `probes` when none were asked (older clients see no change)', async () => {
    const answer = await node.call('/v1/snapshot', {
      token,
      body: { files: [{ domain: 'fixture', path: '~/.config/fixture/app.conf' }], backups: false },
    });
    expect(answer.body).not.to.have.property('probes');
  });
});
