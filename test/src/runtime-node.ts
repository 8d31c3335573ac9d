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
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BUILD_RECORD_ENTRY,
  FLEET_PROTOCOL_VERSION,
  commitLabel,
  createControllerClient,
  defaultNodePolicy,
  parseBuildRecord,
  newOperationId,
  runtimeCommand,
  runtimeLayout,
  type ControllerClient,
  type NodePolicyInput,
  type RuntimeExpectation,
  type RuntimeStatusResponse,
} from '@fleet/core';
import {
  currentPointer,
  readTgz,
  runtimeLockHolder,
  stageGeneration,
  writeNodePolicy,
} from '@fleet/controller';
import type { SkippableContext } from '@fleet/testkit';
import { packedRuntimeArtifact, type RuntimeArtifact } from './artifact.js';
import { FIXTURES, waitFor } from './fleet.js';
import { freePort } from './sshd.js';
import { requireSystemdUser, type SystemdUser, type UserRun } from './systemd-user.js';

export const NODE_ID = 'node-01';

export interface RuntimeNode {
  readonly manager: SystemdUser;
  readonly home: string;
  readonly port: number;
  /** The node's unit (`fleet-controller-<hex>.service`), as it recorded it. */
  readonly unit: string;
  readonly client: ControllerClient;
  /** The real runtime the node starts from (generation A). */
  readonly artifact: RuntimeArtifact;
  /** `systemctl --user show` of the node's unit. */
  unitState(properties?: readonly string[]): Promise<Record<string, string>>;
  /** `systemctl --user ARGS UNIT` as the node's user. */
  systemctl(verb: string): Promise<UserRun>;
  /** A token issued on the node itself (`fleet token issue`, as its user). */
  issueToken(client: string, scopes: readonly string[]): Promise<string>;
  dispose(): Promise<void>;
}

export interface RuntimeNodeOptions {
  /** Environment of the controller's unit (e.g. `FLEET_FAILPOINT`). */
  readonly environment?: Readonly<Record<string, string>>;
  /** Writes an allowing bootstrap policy (default true). */
  readonly allowBootstrap?: boolean;
  /**
   * The policy's `runtime` section (ADR 0019). Default `{ allowUnsigned: true }`: a hand-made
   * test node stages unsigned runtimes, and says so explicitly.
   */
  readonly runtime?: NodePolicyInput['runtime'];
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

let template: Promise<string> | undefined;

/**
 * Staging the 5,800-file runtime fsyncs every file (seconds): it is staged once per process into
 * a template home, and each node gets a copy (`cp -a` keeps the 0444/0555 modes the generation's
 * verification checks), handed to the node's user.
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
      commit: artifact.commit,
    });
    return runtimeLayout(dir, 'linux').generation(artifact.sha256);
  })();
  const source = await template;
  const generations = runtimeLayout(home, 'linux').generations;
  await mkdir(generations, { recursive: true });
  execFileSync('cp', ['-a', source, generations]);
}

/**
 * The node's own policy (contract §5.1), as its owner writes it: no config domain served,
 * runtime changes allowed through systemd-user (unless `allow` is false), and — when given — the
 * unit that runs the controller (else the adapter's record alone names it,
 * docs/runtime-lifecycle.md). Its `runtime` section (ADR 0019) is `runtime` when given, else
 * `{ allowUnsigned: true }` — written out, never a default of the policy: a hand-made test node
 * stages unsigned artifacts because its policy says so. `replace` replaces a policy already there.
 */
export async function writeRuntimeNodePolicy(
  home: string,
  options: {
    readonly allow?: boolean;
    readonly unit?: string;
    readonly runtime?: NodePolicyInput['runtime'];
    readonly replace?: boolean;
  } = {},
): Promise<void> {
  await writeNodePolicy(
    home,
    {
      ...defaultNodePolicy([], {
        bootstrap:
          options.allow === false
            ? { allow: false }
            : { allow: true, supervisors: ['systemd-user'] },
        ...(options.unit ? { supervisor: { kind: 'systemd-user', unit: options.unit } } : {}),
      }),
      runtime: options.runtime ?? { allowUnsigned: true },
    },
    { force: options.replace === true },
  );
}

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

/** Where the node lives and what it runs. */
interface NodePlace {
  readonly home: string;
  readonly port: number;
  readonly unit: string;
  readonly artifact: RuntimeArtifact;
}

/**
 * Stages generation A in the node's home, writes its policy and installs its unit through the
 * fixture's setup script, as the node's user.
 */
async function installNodeUnit(
  manager: SystemdUser,
  { home, port, unit, artifact }: NodePlace,
  options: RuntimeNodeOptions,
): Promise<void> {
  const layout = runtimeLayout(home, 'linux');
  await copyStagedGeneration(artifact, home);
  await currentPointer(layout, 'symlink').flip(artifact.sha256);
  await writeRuntimeNodePolicy(home, {
    allow: options.allowBootstrap !== false,
    unit,
    ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
  });
  const setup = join(home, '.runtime-node-setup.mjs');
  await copyFile(join(FIXTURES, 'runtime-node-setup.mjs'), setup);
  manager.chown(home);
  const cli = await manager.cli();
  const installed = await manager.run(manager.node, [
    setup,
    join(cli, '..', '..'),
    JSON.stringify({
      home,
      nodeId: NODE_ID,
      unit,
      command: runtimeCommand({
        nodePath: manager.node,
        generationDir: layout.generation(artifact.sha256),
        home,
        nodeId: NODE_ID,
        port,
      }),
      environment: options.environment ?? {},
    }),
  ]);
  if (installed.exitCode !== 0) {
    throw new Error(`installing the node's unit failed: ${installed.stderr}${installed.stdout}`);
  }
}

/** `fleet token issue` on the node itself, as its user. */
function tokenIssuer(manager: SystemdUser, home: string): RuntimeNode['issueToken'] {
  return async (client, scopes) => {
    const issued = await manager.fleet([
      'token',
      'issue',
      '--home',
      home,
      '--client',
      client,
      ...scopes.flatMap((scope) => ['--scope', scope]),
      '--json',
    ]);
    if (issued.exitCode !== 0) {
      const ended = issued.signal ? `signal ${issued.signal}` : `exit ${issued.exitCode}`;
      throw new Error(`fleet token issue (${ended}): ${issued.stderr}${issued.stdout}`);
    }
    return (JSON.parse(issued.stdout) as { token: string }).token;
  };
}

/** Stops and removes the node's unit and home, once however often it is called. */
function nodeDisposer(manager: SystemdUser, home: string, unit: string): () => Promise<void> {
  let disposed = false;
  return async () => {
    // Once only: a suite's afterEach still holds the previous node when a beforeEach failed.
    if (disposed) return;
    disposed = true;
    // A runner still finishing a transaction writes under the home: let it end first.
    await waitFor(
      async () => (await runtimeLockHolder(home)) === null,
      60_000,
      'the runtime runner to finish',
    ).catch(() => undefined);
    await manager.systemctl('stop', unit);
    await manager.systemctl('disable', unit);
    await manager.systemctl('daemon-reload');
    execFileSync('chmod', ['-R', 'u+w', home]);
    execFileSync('rm', ['-rf', home]);
  };
}

/** A client of the node's controller, once it answers; else the unit's status says why not. */
async function answeringClient(
  manager: SystemdUser,
  unit: string,
  port: number,
  token: string,
): Promise<ControllerClient> {
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
  ).catch(async (error: Error) => {
    const status = await manager.systemctl('status', '--no-pager', '--lines=20', unit);
    throw new Error(`${error.message}; ${unit}:\n${status.stdout}${status.stderr}`);
  });
  return client;
}

/** The commit label the build record inside an artifact names (`null`: it has none). */
export function carriedCommit(bytes: Buffer): string | null {
  const entry = readTgz(bytes).find((e) => e.path === BUILD_RECORD_ENTRY && e.type === 'file');
  return entry
    ? commitLabel(parseBuildRecord(entry.data.toString('utf8'), BUILD_RECORD_ENTRY))
    : null;
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
    build: { sha256: sha256(bytes), commit: carriedCommit(bytes) },
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
  options: {
    readonly acceptanceTimeoutMs?: number;
    readonly kind?: 'upgrade' | 'bootstrap';
    /** The release signature's one-line body (ADR 0019), sent as `artifact.signature`. */
    readonly signature?: string;
  } = {},
): Promise<string> {
  const staged = await node.client.runtimeStage({
    operationId: newOperationId(),
    kind: options.kind ?? 'upgrade',
    supervisor: 'systemd-user',
    planId: null,
    target,
    artifact: {
      sha256: sha256(bytes),
      bytes: bytes.length,
      content: bytes.toString('base64'),
      ...(options.signature === undefined ? {} : { signature: options.signature }),
    },
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

/** Runs the node-local runner directly, as the node's user would (no go to wait for). */
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
  const ran = await node.manager.run(
    node.manager.node,
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
    { cwd: node.home, timeoutMs: 300_000 },
  );
  return { code: ran.exitCode, output: `${ran.stdout}${ran.stderr}` };
}

/**
 * The node-local status, as the recovery receiver answers it (`fleet bootstrap receive` with
 * `SSH_ORIGINAL_COMMAND=status`, run as the node's user): it works whichever runtime is live, or
 * none.
 */
export async function receiverStatus(node: RuntimeNode): Promise<RuntimeStatusResponse> {
  const ran = await node.manager.fleet(['bootstrap', 'receive', '--home', node.home], {
    env: { SSH_ORIGINAL_COMMAND: 'status' },
    cwd: node.home,
  });
  if (ran.exitCode !== 0) throw new Error(`receiver status exited ${ran.exitCode}: ${ran.stderr}`);
  return JSON.parse(ran.stdout.trim().split('\n').at(-1) as string) as RuntimeStatusResponse;
}

/**
 * The operator's side of `node`: a fleet repository declaring it (its controller, systemd-user, no
 * domains) and a credentials file with its token, in `dir`; returns a runner of the operator's
 * `fleet` against them.
 */
export async function operatorOf(
  node: RuntimeNode,
  dir: string,
): Promise<(args: readonly string[]) => Promise<import('./fleet.js').FleetRun>> {
  const { fleet } = await import('./fleet.js');
  const repo = join(dir, 'repo');
  await mkdir(join(repo, 'hosts'), { recursive: true });
  await writeFile(join(repo, 'hosts', `${NODE_ID}.yaml`), `node_id: ${NODE_ID}\n`);
  await writeFile(
    join(repo, 'fleet.yaml'),
    [
      'apiVersion: fleet/v1',
      `canonicalVersion: ${node.artifact.version}`,
      'hosts:',
      `  ${NODE_ID}:`,
      `    controller: http://127.0.0.1:${node.port}`,
      '    platform: linux',
      '    supervisor: systemd-user',
      '    upgrade: { strategy: tarball }',
      '    domains: []',
      '',
    ].join('\n'),
  );
  execFileSync('git', ['init', '-q', repo]);
  execFileSync('git', ['-C', repo, 'add', '-A']);
  execFileSync('git', [
    '-C',
    repo,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.invalid',
    'commit',
    '-q',
    '-m',
    'init',
  ]);
  const token = await node.issueToken('operator', [
    'node-admin:bootstrap',
    'runtime:upgrade',
    'versions:read',
  ]);
  const credentials = join(dir, 'credentials.json');
  await writeFile(
    credentials,
    `${JSON.stringify({ version: 1, hosts: { [NODE_ID]: { token } } })}\n`,
    {
      mode: 0o600,
    },
  );
  return (args) =>
    fleet(args, {
      cwd: dir,
      env: { FLEET_REPO: repo, FLEET_CREDENTIALS: credentials, XDG_STATE_HOME: join(dir, 'state') },
    });
}
