/**
 * The operator's stage (contract §12; issue 17): when the node's runtime status lists the
 * artifact's generation the stage goes without the artifact's bytes; otherwise, or when the node
 * cannot stage without them (it does not hold the generation verified, or predates the field),
 * the artifact is uploaded. Against a real controller on 127.0.0.1; what went over the wire is
 * counted at the client (requests, bytes), never timed.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  NODE_POLICY_VERSION,
  createControllerClient,
  defaultNodePolicy,
  defineRegistration,
  newOperationId,
  type BootstrapAdapter,
  type ControllerClient,
  type RuntimeExpectation,
} from '@fleet/core';
import {
  TokenStore,
  createController,
  stageGeneration,
  statePaths,
  systemClock,
  writeNodePolicy,
  type Controller,
} from '@fleet/controller';
import { makeTgz, registryFromHooks } from '@fleet/testkit';
import { stageRuntime, uploadInstead } from '../src/runtime/apply.js';
import type { LoadedArtifact } from '../src/runtime/artifact.js';

/**
 * Staging only preflights the adapter and status observes it (nothing installed); anything else
 * it calls fails the test.
 */
const refuse = (what: string) => () => {
  throw new Error(`staging called the adapter's ${what}`);
};
const adapter: BootstrapAdapter = {
  supervisor: 'systemd-user',
  platforms: ['linux', 'darwin', 'win32'],
  pointer: 'symlink',
  preflight: () => Promise.resolve([]),
  definition: refuse('definition'),
  readDefinition: refuse('readDefinition'),
  installDefinition: refuse('installDefinition'),
  start: refuse('start'),
  stop: refuse('stop'),
  restart: refuse('restart'),
  observe: () =>
    Promise.resolve({ present: false, enabled: false, running: false, state: 'not installed' }),
  recordNodeId: refuse('recordNodeId'),
};

function artifactOf(version: string): LoadedArtifact {
  const bytes = makeTgz([
    { path: 'package/package.json', data: JSON.stringify({ name: '@fleet/cli', version }) },
    { path: 'package/bin/run.js', data: 'console.log("runtime");\n', mode: 0o755 },
  ]);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return {
    bytes,
    identity: {
      file: `fleet-${version}.tgz`,
      sha256,
      bytes: bytes.length,
      package: '@fleet/cli',
      version,
      commit: null,
    },
  };
}

function targetOf(artifact: LoadedArtifact): RuntimeExpectation {
  return {
    nodeId: 'node-01',
    package: '@fleet/cli',
    version: artifact.identity.version,
    build: { sha256: artifact.identity.sha256, commit: null },
    protocol: { min: 1, max: 2 },
    catalog: { domains: [], probers: [], bootstrapAdapters: ['systemd-user'] },
  };
}

/** What the client sent: one entry per stage request (its base64 length, 0 without content). */
interface Sent {
  readonly statusReads: number;
  readonly stages: number[];
}

function counting(client: ControllerClient): { client: ControllerClient; sent: Sent } {
  const sent = { statusReads: 0, stages: [] as number[] };
  const counted: ControllerClient = {
    ...client,
    runtimeStatus: (request) => {
      sent.statusReads += 1;
      return client.runtimeStatus(request);
    },
    runtimeStage: (request) => {
      sent.stages.push(request.artifact.content?.length ?? 0);
      return client.runtimeStage(request);
    },
  };
  return { client: counted, sent };
}

describe('the operator stages a runtime without uploading what the node holds', function () {
  this.timeout(60_000);
  let home: string;
  let controller: Controller;
  let token: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-stage-upload-'));
    // A hand-made node that takes runtime changes, unsigned ones explicitly (ADR 0019).
    await writeNodePolicy(home, {
      ...defaultNodePolicy([], { bootstrap: { allow: true, supervisors: ['systemd-user'] } }),
      runtime: { allowUnsigned: true },
      version: NODE_POLICY_VERSION,
    });
    const registry = await registryFromHooks([
      {
        plugin: { name: '@fleet/plugin-staging-fixture', version: '1.0.0', type: 'core' },
        hook: () =>
          defineRegistration({
            bootstrapAdapters: [
              {
                supervisor: 'systemd-user',
                platforms: ['linux', 'darwin', 'win32'],
                description: 'staging only',
                load: () => Promise.resolve(adapter),
              },
            ],
          }),
      },
    ]);
    controller = await createController({ home, nodeId: 'node-01', registry });
    const store = new TokenStore(statePaths(home), systemClock);
    token = (await store.issue({ client: 'operator', scopes: ['runtime:upgrade'] })).token;
  });
  afterEach(async () => {
    await controller.close();
    await rm(home, { recursive: true, force: true });
  });

  const clientOf = () =>
    counting(createControllerClient({ host: 'node-01', url: controller.url, token }));

  async function stage(client: ControllerClient, artifact: LoadedArtifact, held?: string[]) {
    return stageRuntime({
      client,
      kind: 'upgrade',
      supervisor: 'systemd-user',
      planId: null,
      target: targetOf(artifact),
      artifact,
      ...(held === undefined ? {} : { held }),
    });
  }

  /** The generation an earlier, finished transaction left on the node. */
  async function holdOnNode(artifact: LoadedArtifact): Promise<void> {
    const tgz = join(home, 'earlier-upload.tgz');
    await writeFile(tgz, artifact.bytes);
    await stageGeneration({
      home,
      platform: process.platform as 'linux',
      artifact: tgz,
      sha256: artifact.identity.sha256,
    });
  }

  it('a generation the node lists: one stage request, no bytes sent, staged from the held one', async () => {
    const artifact = artifactOf('2.0.0');
    await holdOnNode(artifact);
    const { client, sent } = clientOf();
    const result = await stage(client, artifact);
    expect(sent).to.deep.equal({ statusReads: 1, stages: [0] });
    expect(result.uploaded).to.equal(false);
    expect(result.staged).to.include({ buildId: artifact.identity.sha256, reused: true });
  });

  it('a generation the node does not list: the artifact is uploaded, once', async () => {
    const artifact = artifactOf('2.0.0');
    const { client, sent } = clientOf();
    const result = await stage(client, artifact);
    expect(sent).to.deep.equal({
      statusReads: 1,
      stages: [artifact.bytes.toString('base64').length],
    });
    expect(result.uploaded).to.equal(true);
    expect(result.staged).to.include({ buildId: artifact.identity.sha256, reused: false });
  });

  it('a status that listed a generation the node no longer holds: refused (GENERATION_NOT_HELD), then uploaded', async () => {
    const artifact = artifactOf('2.0.0');
    const { client, sent } = clientOf();
    const lines: string[] = [];
    const result = await stageRuntime({
      client,
      kind: 'upgrade',
      supervisor: 'systemd-user',
      planId: null,
      target: targetOf(artifact),
      artifact,
      held: [artifact.identity.sha256],
      onProgress: (line) => lines.push(line),
    });
    expect(sent).to.deep.equal({
      statusReads: 0,
      stages: [0, artifact.bytes.toString('base64').length],
    });
    expect(result.uploaded).to.equal(true);
    expect(result.staged.reused).to.equal(false);
    expect(lines.join('\n')).to.contain('(GENERATION_NOT_HELD): uploading');
  });

  it('uploads instead only when the node does not hold it or predates stages without bytes (a table)', () => {
    const cases: [code: string, message: string, expected: boolean][] = [
      ['GENERATION_NOT_HELD', 'this node holds no verified generation …', true],
      // What a node that predates the field answers (its schema requires the content).
      [
        'BAD_REQUEST',
        'the request body does not match the schema: artifact.content: Invalid input: expected string, received undefined',
        true,
      ],
      [
        'BAD_REQUEST',
        'the request body does not match the schema: target.nodeId: Too small',
        false,
      ],
      [
        'GENERATION_INVALID',
        'the request expects commit abc, but generations/… records def',
        false,
      ],
      ['LOCKED', 'runtime transaction 01J… is still open', false],
      ['SCOPE_DENIED', 'artifact.content', false],
    ];
    for (const [code, message, expected] of cases) {
      expect(uploadInstead({ code, message }), `${code}: ${message}`).to.equal(expected);
    }
  });

  it('resume (issue 36): a transaction open at staged is not resumed, nothing started (exit 3)', async () => {
    const artifact = artifactOf('2.0.0');
    const { client } = clientOf();
    const { staged } = await stage(client, artifact);
    const refused = await client
      .runtimeActivate({
        operationId: newOperationId(),
        transaction: staged.transaction,
        resume: true,
      })
      .then(
        () => null,
        (error: unknown) => error as { code: string; message: string; exitCode: number },
      );
    expect(refused?.code).to.equal('PRECONDITION_FAILED');
    expect(refused?.exitCode).to.equal(3);
    expect(refused?.message).to.match(/is not open past "activated".*nothing to resume/);
    const status = await client.runtimeStatus({ supervisor: 'systemd-user' });
    expect(status.busy).to.equal(null);
    expect(status.transaction).to.deep.include({ id: staged.transaction, lastStep: 'staged' });
  });
});
