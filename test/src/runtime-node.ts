/**
 * A node for runtime lifecycle tests: a real home, the fake `systemctl` (testkit) on PATH, and a
 * real controller running from a staged generation of the packed runtime artifact under the
 * systemd-user adapter — so upgrades, rollbacks and kills go through the real controller, the
 * real runner and the real adapter; only systemd itself is the testkit's stand-in.
 */
import { createHash } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FLEET_PROTOCOL_VERSION,
  createControllerClient,
  defaultNodePolicy,
  newOperationId,
  runtimeCommand,
  runtimeLayout,
  type ControllerClient,
  type RuntimeExpectation,
  type RuntimeStatusResponse,
} from '@fleet/core';
import {
  currentPointer,
  runtimeLockHolder,
  stageGeneration,
  statePaths,
  systemClock,
  TokenStore,
  writeNodePolicy,
} from '@fleet/controller';
import { createSystemdUserAdapter } from '@fleet/plugin-bootstrap-systemd';
import { createFakeSupervisorHost, type FakeSupervisorHost } from '@fleet/testkit';
import { packedRuntimeArtifact, type RuntimeArtifact } from './artifact.js';
import { waitFor } from './fleet.js';
import { freePort } from './sshd.js';

export const NODE_ID = 'node-01';

export interface RuntimeNode {
  readonly host: FakeSupervisorHost;
  readonly home: string;
  readonly port: number;
  readonly client: ControllerClient;
  /** The real runtime the node starts from (generation A). */
  readonly artifact: RuntimeArtifact;
  readonly adapter: ReturnType<typeof createSystemdUserAdapter>;
  dispose(): Promise<void>;
}

export interface RuntimeNodeOptions {
  /** Environment of the controller's unit (e.g. `FLEET_FAILPOINT`). */
  readonly environment?: Readonly<Record<string, string>>;
  /** Writes an allowing bootstrap policy (default true). */
  readonly allowBootstrap?: boolean;
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

let template: Promise<string> | undefined;

/**
 * Staging the 5,800-file runtime fsyncs every file (seconds): it is staged once per process into
 * a template home, and each node gets a copy (`cp -a` keeps the 0444/0555 modes the generation's
 * verification checks).
 */
async function copyStagedGeneration(artifact: RuntimeArtifact, home: string): Promise<void> {
  template ??= (async () => {
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'fleet-generation-template-'));
    process.once('exit', () => {
      try {
        execFileSync('chmod', ['-R', 'u+w', dir]);
        execFileSync('rm', ['-rf', dir]);
      } catch {
        // best effort
      }
    });
    await stageGeneration({
      home: dir,
      platform: 'linux',
      artifact: artifact.path,
      sha256: artifact.sha256,
      commit: null,
    });
    return runtimeLayout(dir, 'linux').generation(artifact.sha256);
  })();
  const source = await template;
  const generations = runtimeLayout(home, 'linux').generations;
  await mkdir(generations, { recursive: true });
  execFileSync('cp', ['-a', source, generations]);
}

/** Starts a node running generation A (the packed runtime) under the fake systemd. */
export async function startRuntimeNode(options: RuntimeNodeOptions = {}): Promise<RuntimeNode> {
  const artifact = await packedRuntimeArtifact();
  const host = await createFakeSupervisorHost({ nodeId: NODE_ID });
  const home = host.home;
  const port = await freePort();
  const layout = runtimeLayout(home, 'linux');
  await copyStagedGeneration(artifact, home);
  await currentPointer(layout, 'symlink').flip(artifact.sha256);
  const adapter = createSystemdUserAdapter();
  const command = runtimeCommand({
    nodePath: process.execPath,
    generationDir: layout.generation(artifact.sha256),
    home,
    nodeId: NODE_ID,
    port,
  });
  await adapter.installDefinition(
    host,
    adapter.definition({
      home,
      nodeId: NODE_ID,
      command,
      ...(options.environment ? { environment: options.environment } : {}),
    }),
  );
  // The node's own policy (contract §5.1): no config domain is served here; bootstrap is
  // allowed through systemd-user unless the test says otherwise.
  await writeNodePolicy(
    home,
    defaultNodePolicy([], {
      bootstrap:
        options.allowBootstrap === false
          ? { allow: false }
          : { allow: true, supervisors: ['systemd-user'] },
    }),
  );
  await adapter.start(host);
  const { token } = await new TokenStore(statePaths(home), systemClock).issue({
    client: 'test-operator',
    scopes: ['runtime:upgrade', 'node-admin:bootstrap', 'versions:read'],
  });
  const client = createControllerClient({
    host: NODE_ID,
    url: `http://127.0.0.1:${port}`,
    token,
    timeoutMs: 120_000,
  });
  await waitFor(
    async () => (await client.identity().catch(() => null)) !== null,
    90_000,
    'the controller of generation A',
  );
  return {
    host,
    home,
    port,
    client,
    artifact,
    adapter,
    dispose: async () => {
      // A runner still finishing a transaction writes under the home: let it end first.
      await waitFor(
        async () => (await runtimeLockHolder(home)) === null,
        60_000,
        'the runtime runner to finish',
      ).catch(() => undefined);
      await host.dispose();
    },
  };
}

/** What a runtime built from `bytes` must report on this node (domains: none; systemd-user). */
export function expectationFor(
  bytes: Buffer,
  pkg: { name: string; version: string },
  overrides: Partial<RuntimeExpectation> = {},
): RuntimeExpectation {
  return {
    nodeId: NODE_ID,
    package: pkg.name,
    version: pkg.version,
    build: { sha256: sha256(bytes), commit: null },
    protocol: { min: FLEET_PROTOCOL_VERSION, max: FLEET_PROTOCOL_VERSION },
    catalog: { domains: [], probers: [], bootstrapAdapters: ['systemd-user'] },
    ...overrides,
  };
}

/** Stage + activate through the controller; returns the transaction id. */
export async function upgradeThroughController(
  node: RuntimeNode,
  bytes: Buffer,
  target: RuntimeExpectation,
  options: { readonly acceptanceTimeoutMs?: number; readonly kind?: 'upgrade' | 'bootstrap' } = {},
): Promise<string> {
  const staged = await node.client.runtimeStage({
    operationId: newOperationId(),
    kind: options.kind ?? 'upgrade',
    supervisor: 'systemd-user',
    planId: null,
    target,
    artifact: { sha256: sha256(bytes), bytes: bytes.length, content: bytes.toString('base64') },
  });
  await node.client.runtimeActivate({
    operationId: newOperationId(),
    transaction: staged.transaction,
    acceptanceTimeoutMs: options.acceptanceTimeoutMs ?? 20_000,
  });
  return staged.transaction;
}

/** Polls status until the transaction `id` (or, with `null`, the newest) has ended. */
export async function waitForEnd(
  node: RuntimeNode,
  id: string | null,
  timeoutMs = 180_000,
): Promise<RuntimeStatusResponse> {
  let last: RuntimeStatusResponse | null = null;
  await waitFor(
    async () => {
      last = await node.client.runtimeStatus({ supervisor: 'systemd-user' }).catch(() => null);
      const txn = last?.transaction;
      return (
        txn !== null &&
        txn !== undefined &&
        (id === null || txn.id === id) &&
        txn.lastStep === 'end' &&
        last?.busy === null
      );
    },
    timeoutMs,
    `transaction ${id ?? '(newest)'} to end`,
  );
  return last as unknown as RuntimeStatusResponse;
}

/** Runs the node-local runner directly (as an operator on the node would), with a clean env. */
export async function runRunner(
  node: RuntimeNode,
  mode: 'activate' | 'rollback',
  transaction: string,
  extra: readonly string[] = [],
): Promise<{ code: number | null; output: string }> {
  const script = join(
    runtimeLayout(node.home, 'linux').generation(node.artifact.sha256),
    'package',
    'bin',
    'run.js',
  );
  const child = spawn(
    process.execPath,
    [
      script,
      'controller',
      'runtime-run',
      '--home',
      node.home,
      '--mode',
      mode,
      '--transaction',
      transaction,
      '--acceptance-timeout-ms',
      '30000',
      ...extra,
    ],
    { env: { ...node.host.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

/**
 * The node-local status, as the recovery receiver answers it (`fleet bootstrap receive` with
 * `SSH_ORIGINAL_COMMAND=status`): it works whichever runtime is live, or none.
 */
export async function receiverStatus(node: RuntimeNode): Promise<RuntimeStatusResponse> {
  const { FLEET_BIN } = await import('./fleet.js');
  const child = spawn(process.execPath, [FLEET_BIN, 'bootstrap', 'receive', '--home', node.home], {
    env: { ...node.host.env, SSH_ORIGINAL_COMMAND: 'status' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`receiver status exited ${code}: ${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as RuntimeStatusResponse;
}
