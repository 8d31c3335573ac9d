/**
 * Installing a runtime node (runtime-node.ts) in a home of the harness's user: generation A (the
 * packed runtime) staged once per process and copied into each home, the `current` pointer, the
 * node's own policy (contract §5.1; its `runtime` section, ADR 0019) and the controller's unit,
 * installed by the bootstrap-systemd adapter as the user (test/fixtures/runtime-node-setup.mjs).
 * `writeRuntimeNodePolicy` is also the suites' way to rewrite a node's policy.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  defaultNodePolicy,
  runtimeCommand,
  runtimeLayout,
  type NodePolicyInput,
} from '@fleet/core';
import { currentPointer, stageGeneration, writeNodePolicy } from '@fleet/controller';
import type { RuntimeArtifact } from './artifact.js';
import { FIXTURES } from './fleet.js';
import { NODE_ID } from './runtime-node-expectation.js';
import type { SystemdUser } from './systemd-user.js';

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

/** Where the node lives and what it runs. */
export interface NodePlace {
  readonly home: string;
  readonly port: number;
  readonly unit: string;
  readonly artifact: RuntimeArtifact;
}

/**
 * Stages generation A in the node's home, writes its policy and installs its unit through the
 * fixture's setup script, as the node's user.
 */
export async function installNodeUnit(
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
