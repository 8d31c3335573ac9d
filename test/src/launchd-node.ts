/**
 * A Mac node for end-to-end tests (ADR 0022): launchd is the testkit's strict fake `launchctl`, and
 * every fleet process on the node — the receiver in the SSH login, the controller, the runner, the
 * node-id switch — is a real Node process that reports `process.platform === 'darwin'`. The node
 * is made as an operator makes one: its owner's node policy (`supervisor: launchd`) and token, then
 * `fleet bootstrap plan` and `fleet bootstrap apply --recover` over a real OpenSSH server through
 * the real receiver, which installs the packed runtime as the LaunchAgent `dev.fleet.controller`.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { expect } from 'chai';
import { createControllerClient, defaultNodePolicy, type ControllerClient } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import {
  AS_DARWIN_NODE_OPTIONS,
  FAKE_SUPERVISOR_BIN,
  createFakeSupervisorHost,
  type FakeSupervisorHost,
} from '@fleet/testkit';
import { packedRuntimeArtifact, type RuntimeArtifact } from './artifact.js';
import { FLEET_BIN, fleet, json, tempDir, waitFor, type FleetRun } from './fleet.js';
import { carriedCommit, NODE_ID, sha256 } from './runtime-node.js';
import { freePort, startSshd, type Sshd } from './sshd.js';

export const LAUNCHD_LABEL = 'dev.fleet.controller';

export interface MacNodeOptions {
  /** The domains the node's policy serves and fleet.yaml lists for it (default none). */
  readonly domains?: readonly string[];
  /** Scopes of the operator's token besides bootstrapping and upgrading. */
  readonly scopes?: readonly string[];
  /** Files of the repository besides fleet.yaml and hosts/node-01.yaml (path → text). */
  readonly files?: Readonly<Record<string, string>>;
}

export interface MacNode {
  readonly host: FakeSupervisorHost;
  readonly artifact: RuntimeArtifact;
  readonly repo: string;
  readonly scratch: string;
  readonly uid: number;
  readonly agentPlist: string;
  readonly token: string;
  /** `fleet ARGS` from the operator's seat. */
  run(args: readonly string[]): Promise<FleetRun>;
  /** A client of the controller at fleet.yaml's URL. */
  client(): ControllerClient;
  /** `launchctl ARGS` on the node, as its owner would type it. */
  launchctl(...args: string[]): ReturnType<FakeSupervisorHost['processes']['run']>;
  /** A service (default the controller's agent) as `launchctl print` shows it. */
  printed(label?: string): Promise<{ state: string; pid: number | null }>;
  /**
   * Until the controller launchd runs answers at fleet.yaml's URL: `launchctl bootstrap` returns
   * once launchd started the process, before it listens — a request sent at once is refused
   * (`HOST_UNREACHABLE: connection refused`), as it would be from an owner's shell.
   */
  answering(): Promise<void>;
  /** fleet.yaml's canonical artifact is `file` (`version`), committed. */
  makeCanonical(file: string, version: string): Promise<void>;
  /**
   * Arms (or with `null` disarms) `FLEET_FAILPOINT` for the controller — and so for the runners
   * it starts, which get its environment — as the node's owner would: the agent's
   * `EnvironmentVariables` edited, the agent booted out and bootstrapped again (launchd has no
   * reload); then waits for the new controller to answer.
   */
  armFailpoint(value: string | null): Promise<void>;
  git(...args: string[]): string;
  dispose(): Promise<void>;
}

/** fleet.yaml for the node: its controller on 127.0.0.1, its SSH recovery through `sshd`. */
function manifest(port: number, sshd: Sshd, domains: readonly string[]): string {
  return [
    'apiVersion: fleet/v1',
    'canonicalVersion: 0.0.0',
    'artifacts:',
    'hosts:',
    `  ${NODE_ID}:`,
    `    controller: http://127.0.0.1:${port}`,
    '    platform: darwin',
    '    supervisor: launchd',
    '    upgrade: { strategy: tarball }',
    `    domains: [${domains.join(', ')}]`,
    `    ssh: { host: 127.0.0.1, port: ${sshd.port}, user: ${sshd.user}, hostKey: "${sshd.hostKey}" }`,
    ...(domains.length > 0
      ? ['domains:', ...domains.map((d) => `  ${d}: { unattended: deny }`)]
      : []),
    '',
  ].join('\n');
}

/** The Mac: launchd's user domain has launchctl and node on its PATH, and runs jobs as on macOS. */
async function macHost(domains: readonly string[]): Promise<{
  host: FakeSupervisorHost;
  path: string;
}> {
  const host = await createFakeSupervisorHost({ platform: 'darwin' });
  const path = [FAKE_SUPERVISOR_BIN, dirname(process.execPath), '/usr/bin:/bin:/usr/sbin:/sbin'];
  await host.setLaunchdPath(path.join(delimiter));
  await host.runJobsOnMac();
  // The owner's policy: launchd runs the controller.
  await writeNodePolicy(host.home, {
    ...defaultNodePolicy(domains, {
      bootstrap: { allow: true, supervisors: ['launchd'] },
      supervisor: { kind: 'launchd', label: LAUNCHD_LABEL },
    }),
    runtime: { allowUnsigned: true },
  });
  return { host, path: path.join(delimiter) };
}

/** The operator's token, issued on the node by its owner. */
async function issueToken(home: string, extra: readonly string[]): Promise<string> {
  const scopes = ['node-admin:bootstrap', 'runtime:upgrade', 'versions:read', ...extra];
  const issued = await fleet([
    ...['token', 'issue', '--home', home, '--client', 'operator', '--json'],
    ...scopes.flatMap((s) => ['--scope', s]),
  ]);
  expect(issued.exitCode, issued.stderr).to.equal(0);
  return (JSON.parse(issued.stdout) as { token: string }).token;
}

/** The repository: `files` committed, with git as the tests call it. */
async function makeRepo(
  repo: string,
  files: Readonly<Record<string, string>>,
): Promise<(...args: string[]) => string> {
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args],
      { encoding: 'utf8' },
    );
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, file)), { recursive: true });
    await writeFile(join(repo, file), text);
  }
  execFileSync('git', ['init', '-q', repo]);
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return git;
}

/**
 * A Mac node not yet bootstrapped: its owner's policy and token, its SSH login, the repository
 * naming it. The caller must have checked sshd is there (`requireSshd`).
 */
export async function macNode(options: MacNodeOptions = {}): Promise<MacNode> {
  const domains = options.domains ?? [];
  const scratch = await tempDir('fleet-mac-node-');
  const repo = join(scratch.path, 'repo');
  const artifact = await packedRuntimeArtifact();
  const port = await freePort();
  const { host, path } = await macHost(domains);
  const token = await issueToken(host.home, options.scopes ?? []);
  // The login session of the Mac: its PATH has launchctl, and node reports darwin.
  const sshd = await startSshd({
    forcedCommand: [
      ...['/usr/bin/env', `PATH=${path}`, `NODE_OPTIONS=${AS_DARWIN_NODE_OPTIONS}`],
      ...[process.execPath, FLEET_BIN, 'bootstrap', 'receive', '--home', host.home],
    ],
  });
  await writeFile(
    join(scratch.path, 'credentials.json'),
    `${JSON.stringify({ version: 1, hosts: { [NODE_ID]: { token, ssh: { identityFile: sshd.identityFile } } } })}\n`,
    { mode: 0o600 },
  );
  const git = await makeRepo(repo, {
    'fleet.yaml': manifest(port, sshd, domains),
    [`hosts/${NODE_ID}.yaml`]: `node_id: ${NODE_ID}\n`,
    ...options.files,
  });
  const dispose = async () => {
    await sshd.stop();
    await host.dispose();
    await scratch.cleanup();
  };
  return {
    ...handles({ host, artifact, repo, scratch: scratch.path, port, token, git }),
    dispose,
  };
}

/**
 * A bootstrapped Mac node: the packed runtime canonical in fleet.yaml, installed and accepted
 * under the fake launchd. The caller must have checked sshd is there (`requireSshd`).
 */
export async function bootstrappedMacNode(options: MacNodeOptions = {}): Promise<MacNode> {
  const node = await macNode(options);
  try {
    await bootstrap(node);
  } catch (error) {
    await node.dispose();
    throw error;
  }
  return node;
}

/** `makeCanonical` of a node whose repository is `repo`. */
function canonical(repo: string, git: (...args: string[]) => string) {
  return async (file: string, version: string): Promise<void> => {
    const bytes = await readFile(file);
    const name = `artifacts/fleet-${version}.tgz`;
    await mkdir(join(repo, 'artifacts'), { recursive: true });
    await copyFile(file, join(repo, name));
    const text = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    const commit = carriedCommit(bytes) ?? git('rev-parse', 'HEAD').trim();
    await writeFile(
      join(repo, 'fleet.yaml'),
      text
        .replace(/^canonicalVersion: .*$/m, `canonicalVersion: ${version}`)
        .replace(
          /^artifacts:\n/m,
          `artifacts:\n  - { version: ${version}, file: ${name}, sha256: ${sha256(bytes)}, commit: ${commit} }\n`,
        ),
    );
    git('add', '-A');
    git('commit', '-q', '-m', `artifact ${version}`);
  };
}

/** `armFailpoint` of the agent at `agentPlist`. */
function failpoint(
  agentPlist: string,
  uid: number,
  launchctl: MacNode['launchctl'],
  answering: () => Promise<void>,
) {
  return async (value: string | null): Promise<void> => {
    const text = (await readFile(agentPlist, 'utf8')).replace(
      /\n {4}<key>FLEET_FAILPOINT<\/key>\n {4}<string>[^<]*<\/string>/,
      '',
    );
    const armed =
      value === null
        ? text
        : text.replace(
            '<key>EnvironmentVariables</key>\n  <dict>',
            `<key>EnvironmentVariables</key>\n  <dict>\n    <key>FLEET_FAILPOINT</key>\n    <string>${value}</string>`,
          );
    await writeFile(agentPlist, armed);
    const out = await launchctl('bootout', `gui/${uid}/${LAUNCHD_LABEL}`);
    expect(out.exitCode, out.stderr).to.equal(0);
    const loaded = await launchctl('bootstrap', `gui/${uid}`, agentPlist);
    expect(loaded.exitCode, loaded.stderr).to.equal(0);
    await answering();
  };
}

/** What a test does with the node, from the operator's seat and at the node's keyboard. */
function handles(input: {
  host: FakeSupervisorHost;
  artifact: RuntimeArtifact;
  repo: string;
  scratch: string;
  port: number;
  token: string;
  git: (...args: string[]) => string;
}): Omit<MacNode, 'dispose'> {
  const { host, repo, scratch, port, token } = input;
  const uid = process.getuid?.() ?? 0;
  const run = (args: readonly string[]): Promise<FleetRun> =>
    fleet(args, {
      cwd: scratch,
      env: {
        FLEET_REPO: repo,
        FLEET_CREDENTIALS: join(scratch, 'credentials.json'),
        XDG_STATE_HOME: join(scratch, 'state'),
      },
    });
  const client = () =>
    createControllerClient({ host: NODE_ID, url: `http://127.0.0.1:${port}`, token });
  const launchctl = (...args: string[]) =>
    host.processes.run({ command: 'launchctl', args, timeoutMs: 60_000 });
  const agentPlist = join(host.home, 'Library/LaunchAgents', `${LAUNCHD_LABEL}.plist`);
  const printed = async (label = LAUNCHD_LABEL) => {
    const result = await launchctl('print', `gui/${uid}/${label}`);
    expect(result.exitCode, result.stderr).to.equal(0);
    return {
      state: /^\tstate = (.*)$/m.exec(result.stdout)?.[1] ?? '',
      pid: Number(/^\tpid = (\d+)$/m.exec(result.stdout)?.[1] ?? Number.NaN) || null,
    };
  };
  const answering = () =>
    waitFor(
      async () => {
        const { pid } = await printed();
        const identity = await client()
          .identity()
          .catch(() => null);
        return pid !== null && identity?.pid === pid;
      },
      120_000,
      'the controller the agent runs to answer',
    );
  const makeCanonical = canonical(repo, input.git);
  const armFailpoint = failpoint(agentPlist, uid, launchctl, answering);
  return {
    ...input,
    uid,
    agentPlist,
    run,
    client,
    launchctl,
    printed,
    answering,
    makeCanonical,
    armFailpoint,
  };
}

/** fleet.yaml's canonical artifact is the packed runtime; bootstrapped over SSH, accepted. */
async function bootstrap(node: MacNode): Promise<void> {
  await node.makeCanonical(node.artifact.path, node.artifact.version);
  const plan = join(node.scratch, 'bootstrap.plan.json');
  const planned = await node.run(['bootstrap', 'plan', NODE_ID, '--out', plan, '--json']);
  expect(planned.exitCode, planned.stderr + planned.stdout).to.equal(0);
  const applied = await node.run(['bootstrap', 'apply', plan, '--confirm', '--recover', '--json']);
  expect(applied.exitCode, applied.stderr + applied.stdout).to.equal(0);
  expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');
  await node.answering();
}
