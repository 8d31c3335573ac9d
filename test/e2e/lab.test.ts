/**
 * The lab (contract §13, issue 3 item 7) through the real binary: real supervisor and controller
 * processes, real HTTP on 127.0.0.1 through the operator's client, a real git repository.
 */
import { expect } from 'chai';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createControllerClient, forEachHost, type LabDocument } from '@fleet/core';
import { labSupervisorClient, type LabSupervisorState } from '@fleet/lab';
import { destroyLab, fleet, json, labPids, pidAlive, tempDir, waitFor } from '../src/fleet.js';

const git = (repo: string, ...args: string[]) =>
  execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });

interface Credentials {
  version: 1;
  hosts: Record<string, { token: string }>;
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

function clientFor(document: LabDocument, credentials: Credentials, name: string) {
  const host = document.hosts.find((h) => h.name === name);
  if (!host) throw new Error(`no host ${name}`);
  return createControllerClient({
    host: name,
    url: host.controller,
    token: credentials.hosts[name]?.token ?? '',
    timeoutMs: 5_000,
  });
}

describe('fleet lab', function () {
  this.timeout(120_000);

  describe('up --hosts 2, supervisor restarts, down', () => {
    let tmp: { path: string; cleanup: () => Promise<void> };
    let dir: string;
    let document: LabDocument;
    let credentials: Credentials;
    let stranger: ChildProcess | undefined;

    before(async () => {
      tmp = await tempDir('fleet-lab-');
      dir = join(tmp.path, 'lab');
      const run = await fleet(['lab', 'up', '--hosts', '2', '--dir', dir, '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      document = json<LabDocument>(run);
      credentials = await readJson<Credentials>(join(dir, 'credentials.json'));
    });
    after(async () => {
      stranger?.kill('SIGKILL');
      if (dir) await destroyLab(dir);
      await tmp?.cleanup();
    });

    it('builds the layout of contract §13, lab.json equal to what --json printed', async () => {
      expect(await readJson(join(dir, 'lab.json'))).to.deep.equal(document);
      expect(document.repo).to.equal(join(dir, 'repo'));
      expect(document.credentials).to.equal(join(dir, 'credentials.json'));
      expect(document.hosts.map((h) => h.name)).to.deep.equal(['node-01', 'node-02']);
      for (const host of document.hosts) {
        expect(host.home).to.equal(join(dir, 'nodes', host.name, 'home'));
        expect((await stat(host.home)).isDirectory()).to.equal(true);
        expect(host.controller).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(pidAlive(host.pid)).to.equal(true);
        const state = await readJson<LabSupervisorState>(
          join(dir, 'nodes', host.name, 'supervisor.json'),
        );
        expect(state.flags).to.deep.equal({
          nodeId: host.name,
          port: Number(new URL(host.controller).port),
        });
        expect(state.pid).to.equal(host.pid);
        expect(state.supervisorPid).not.to.equal(host.pid);
        expect(pidAlive(state.supervisorPid)).to.equal(true);
      }
      expect(new Set(document.hosts.map((h) => h.controller)).size).to.equal(2);
    });

    it('writes credentials.json 0600 with one token per host, and the token store keeps only hashes', async () => {
      expect((await stat(join(dir, 'credentials.json'))).mode & 0o777).to.equal(0o600);
      expect(credentials.version).to.equal(1);
      expect(Object.keys(credentials.hosts).sort()).to.deep.equal(['node-01', 'node-02']);
      const token = credentials.hosts['node-01']?.token ?? '';
      const store = await readFile(
        join(dir, 'nodes', 'node-01', 'home', '.local', 'state', 'fleet', 'tokens.json'),
        'utf8',
      );
      expect(token.length).to.be.greaterThan(16);
      expect(store).not.to.include(token);
    });

    it('every controller answers identity with its node id through the operator client', async () => {
      for (const host of document.hosts) {
        const identity = await clientFor(document, credentials, host.name).identity();
        expect(identity.nodeId).to.equal(host.name);
        expect(identity.nodeIdFlag).to.equal(host.name);
        expect(identity.pid).to.equal(host.pid);
      }
      // Each token opens its own node only.
      const crossed = createControllerClient({
        host: 'node-02',
        url: document.hosts[1]?.controller ?? '',
        token: credentials.hosts['node-01']?.token ?? '',
      });
      const error = await crossed.identity().then(
        () => undefined,
        (e: { exitCode: number }) => e,
      );
      expect(error?.exitCode).to.equal(4);
    });

    it('makes a valid fleet repository with every host and a few commits of domain history', async () => {
      const repo = document.repo;
      expect(Number(git(repo, 'rev-list', '--count', 'HEAD').trim())).to.be.at.least(3);
      expect(git(repo, 'status', '--porcelain')).to.equal('');
      for (const file of ['domains/harness-policy/CLAUDE.md', 'domains/router/router.yaml']) {
        const versions = git(repo, 'log', '--format=%H', '--', file).trim().split('\n');
        expect(versions, file).to.have.length(3);
      }
      const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
      for (const host of document.hosts) {
        expect(manifest)
          .to.include(`  ${host.name}:`)
          .and.to.include(JSON.stringify(host.controller));
        expect(await readFile(join(repo, 'hosts', `${host.name}.yaml`), 'utf8')).to.match(
          new RegExp(`node_id: "?${host.name}"?`),
        );
      }
      expect(manifest).to.include('supervisor: lab');
      expect(manifest).to.match(/domains: \[files, harness-policy, router, transport-identity\]/);
      const validate = await fleet(['validate', '--repo', repo, '--json']);
      expect(validate.exitCode, validate.stderr).to.equal(0);
      expect(json(validate)).to.include({ hosts: 2, domains: 4 });
    });

    it('refuses to start a second lab in a DIR whose lab runs (exit 3), changing nothing', async () => {
      const before = await readFile(join(dir, 'lab.json'), 'utf8');
      const run = await fleet(['lab', 'up', '--hosts', '2', '--dir', dir, '--json']);
      expect(run.exitCode).to.equal(3);
      expect(json<{ error: { code: string } }>(run).error.code).to.equal('LOCKED');
      expect(await readFile(join(dir, 'lab.json'), 'utf8')).to.equal(before);
    });

    it('restarts a controller through its supervisor with a new node id, on the same port', async () => {
      const supervisor = labSupervisorClient(join(dir, 'nodes', 'node-01', 'supervisor.sock'));
      const before = await supervisor.status();
      const after = await supervisor.restart({ nodeId: 'node-01-renamed' });
      expect(after.flags).to.deep.equal({ nodeId: 'node-01-renamed', port: before.flags.port });
      expect(after.pid).to.not.equal(before.pid);
      expect(pidAlive(before.pid as number)).to.equal(false);
      const client = clientFor(document, credentials, 'node-01');
      const identity = await client.identity();
      expect(identity).to.include({
        nodeId: 'node-01-renamed',
        nodeIdFlag: 'node-01-renamed',
        pid: after.pid,
      });
      const recorded = await readJson<LabSupervisorState>(
        join(dir, 'nodes', 'node-01', 'supervisor.json'),
      );
      expect(recorded).to.deep.include({ pid: after.pid, flags: after.flags, state: 'running' });
      // And back: the rollback the transport-identity domain does after a failed verification.
      const back = await supervisor.restart({ nodeId: 'node-01' });
      expect((await client.identity()).nodeId).to.equal('node-01');
      expect(back.flags.port).to.equal(before.flags.port);
    });

    it('the supervisor restarts a controller that crashed', async () => {
      const stateFile = join(dir, 'nodes', 'node-02', 'supervisor.json');
      const before = await readJson<LabSupervisorState>(stateFile);
      process.kill(before.pid as number, 'SIGKILL');
      await waitFor(
        async () => {
          const now = await readJson<LabSupervisorState>(stateFile).catch(() => before);
          return now.state === 'running' && now.pid !== before.pid;
        },
        30_000,
        'the crashed controller to be restarted',
      );
      const identity = await clientFor(document, credentials, 'node-02').identity();
      expect(identity.nodeId).to.equal('node-02');
      expect(identity.pid).to.not.equal(before.pid);
    });

    it('lab down stops every recorded process; a second lab down is a no-op', async () => {
      const pids = labPids(dir);
      expect(pids.length).to.be.at.least(4);
      const down = await fleet(['lab', 'down', '--dir', dir, '--json']);
      expect(down.exitCode, down.stderr).to.equal(0);
      for (const pid of pids) expect(pidAlive(pid), `pid ${pid}`).to.equal(false);
      const result = json<{ processes: { outcome: string }[] }>(down);
      expect(
        result.processes.filter((p) => p.outcome === 'terminated' || p.outcome === 'killed'),
      ).to.have.length(4);
      for (const host of ['node-01', 'node-02']) {
        const state = await readJson<LabSupervisorState>(
          join(dir, 'nodes', host, 'supervisor.json'),
        );
        expect(state).to.include({ state: 'stopped', pid: null });
      }
      const again = await fleet(['lab', 'down', '--dir', dir, '--json']);
      expect(again.exitCode, again.stderr).to.equal(0);
      const outcomes = json<{ processes: { outcome: string }[] }>(again).processes.map(
        (p) => p.outcome,
      );
      expect(outcomes.every((outcome) => outcome === 'not-running')).to.equal(true);
    });

    it('never signals a recorded pid that now belongs to another process', async () => {
      stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
      const pid = stranger.pid as number;
      const stateFile = join(dir, 'nodes', 'node-01', 'supervisor.json');
      const original = await readFile(stateFile, 'utf8');
      const state = JSON.parse(original) as LabSupervisorState;
      await writeFile(
        stateFile,
        JSON.stringify({ ...state, pid, supervisorPid: pid, state: 'running' }),
      );
      try {
        const down = await fleet(['lab', 'down', '--dir', dir, '--json']);
        expect(down.exitCode, down.stderr).to.equal(0);
        const mine = json<{ processes: { pid: number; outcome: string }[] }>(down).processes.filter(
          (p) => p.pid === pid,
        );
        expect(mine.map((p) => p.outcome)).to.deep.equal(['not-ours']);
        expect(pidAlive(pid)).to.equal(true);
      } finally {
        await writeFile(stateFile, original);
      }
    });

    it('brings a stopped lab up again as it was: same ports, tokens and repo', async () => {
      const head = git(document.repo, 'rev-parse', 'HEAD');
      const run = await fleet(['lab', 'up', '--dir', dir, '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      const again = json<LabDocument>(run);
      expect(again.hosts.map((h) => h.controller)).to.deep.equal(
        document.hosts.map((h) => h.controller),
      );
      expect(git(document.repo, 'rev-parse', 'HEAD')).to.equal(head);
      for (const host of again.hosts) {
        expect((await clientFor(again, credentials, host.name).identity()).nodeId).to.equal(
          host.name,
        );
      }
      expect((await fleet(['lab', 'down', '--dir', dir])).exitCode).to.equal(0);
      for (const host of again.hosts) expect(pidAlive(host.pid)).to.equal(false);
    });

    it('human: a comment and its exports together on stdout, evaluable; stderr announces nothing missing', async () => {
      const run = await fleet(['lab', 'up', '--dir', dir]);
      try {
        expect(run.exitCode, run.stderr).to.equal(0);
        const lines = run.stdout.trimEnd().split('\n');
        expect(lines[0]).to.match(/^# This lab's repository and credentials for your shell: /);
        expect(lines.slice(1)).to.deep.equal([
          `export FLEET_REPO=${document.repo}`,
          `export FLEET_CREDENTIALS=${document.credentials}`,
        ]);
        // issue 35: "Use it with …:" went to stderr, its exports to stdout (to eval, in the demo)
        expect(run.stderr).to.match(/^Lab up in /m);
        expect(run.stderr.trimEnd()).to.not.match(/:$/m);
        const shell = execFileSync(
          'sh',
          ['-c', 'eval "$1"; printf "%s\\n" "$FLEET_REPO" "$FLEET_CREDENTIALS"', 'sh', run.stdout],
          { encoding: 'utf8' },
        );
        expect(shell).to.equal(`${document.repo}\n${document.credentials}\n`);
      } finally {
        expect((await fleet(['lab', 'down', '--dir', dir])).exitCode).to.equal(0);
      }
    });
  });

  describe('up --virtual --hosts 50', () => {
    let tmp: { path: string; cleanup: () => Promise<void> };
    let dir: string;

    before(async () => {
      tmp = await tempDir('fleet-lab-virtual-');
      dir = join(tmp.path, 'lab');
    });
    after(async () => {
      if (dir) await destroyLab(dir);
      await tmp?.cleanup();
    });

    it('answers for every host from one process, each with its own node id and port', async () => {
      const run = await fleet(['lab', 'up', '--virtual', '--hosts', '50', '--dir', dir, '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      const document = json<LabDocument>(run);
      expect(document.hosts).to.have.length(50);
      expect(document.hosts[49]?.name).to.equal('node-50');
      const pids = new Set(document.hosts.map((h) => h.pid));
      expect(pids.size).to.equal(1);
      const [pid] = [...pids] as [number];
      expect(new Set(document.hosts.map((h) => h.controller)).size).to.equal(50);
      const credentials = await readJson<Credentials>(join(dir, 'credentials.json'));
      const outcomes = await forEachHost(
        document.hosts.map((h) => h.name),
        (name) => clientFor(document, credentials, name).identity(),
        { concurrency: 16 },
      );
      for (const outcome of outcomes) {
        expect(outcome.ok, outcome.ok ? '' : outcome.error.message).to.equal(true);
        if (outcome.ok) expect(outcome.value).to.include({ nodeId: outcome.host, pid });
      }
      // The supervisor seam works per node in the virtual lab too.
      const restarted = await labSupervisorClient(
        join(dir, 'nodes', 'node-07', 'supervisor.sock'),
      ).restart({ nodeId: 'v7' });
      expect(restarted.pid).to.equal(pid);
      expect((await clientFor(document, credentials, 'node-07').identity()).nodeId).to.equal('v7');

      const down = await fleet(['lab', 'down', '--dir', dir]);
      expect(down.exitCode, down.stderr).to.equal(0);
      expect(pidAlive(pid)).to.equal(false);
    });
  });
});
