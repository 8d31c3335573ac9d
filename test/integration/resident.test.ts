/**
 * The resident operator process end to end (docs/resident.md), with the real CLI on a real lab of
 * two controllers: `fleet resident start` once, then verbs that run there give what they give in
 * their own process — output, exit code, each call's own environment and working directory — and
 * every way it is not used (another verb, a directory others may enter, changed code, a busy
 * resident) leaves the verb running in its own process. Ctrl-C ends the call and the resident.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { FLEET_BIN, fleet, json, pidAlive, waitFor, type FleetRun } from '../src/fleet.js';
import { Lab } from '../e2e/lab-fixture.js';

interface Status {
  running: boolean;
  pid?: number;
  calls?: number;
  busy?: boolean;
  socket?: string;
}

describe('integration: the resident operator process', function () {
  this.timeout(120_000);
  let lab: Lab;
  let runtime: string;
  let env: Record<string, string>;

  before(async function () {
    if (process.platform === 'win32') this.skip(); // no Unix sockets: the resident refuses there
    lab = await Lab.create('fleet-resident-');
    await lab.up(2);
    const isolated = lab.residentEnv();
    runtime = isolated.runtime;
    env = {
      ...isolated.env,
      // Calls use a running resident and never start one, but where a test says otherwise.
      FLEET_RESIDENT: 'manual',
    };
  });
  after(async () => {
    if (env) await fleet(['resident', 'stop'], { env });
    await lab?.destroy();
  });

  const run = (args: string[], extra: Record<string, string> = {}, cwd = lab.tmp) =>
    fleet(args, { env: { ...env, ...extra }, cwd });
  const inOwnProcess = (args: string[], extra: Record<string, string> = {}, cwd = lab.tmp) =>
    run(args, { ...extra, FLEET_RESIDENT: 'off' }, cwd);
  const status = async (): Promise<Status> =>
    json<Status>(await run(['resident', 'status', '--json']));
  const calls = async (): Promise<number> => (await status()).calls ?? -1;
  const withoutTime = (stdout: string) => {
    const report = JSON.parse(stdout) as Record<string, unknown>;
    delete report['generatedAt'];
    return report;
  };

  it('starts once, in a directory only the user may enter', async () => {
    expect(await status()).to.deep.equal({ running: false });
    const started = await run(['resident', 'start', '--json']);
    expect(started.exitCode, started.stderr).to.equal(0);
    const info = json<Status & { started: boolean }>(started);
    expect(info.started).to.equal(true);
    expect(pidAlive(info.pid ?? 0)).to.equal(true);
    expect(info.socket).to.match(new RegExp(`^${runtime}/fleet/operator-[0-9a-f]{16}\\.sock$`));
    const again = json<Status & { started: boolean }>(await run(['resident', 'start', '--json']));
    expect(again).to.include({ started: false, pid: info.pid });
    expect(await calls()).to.equal(0);
  });

  it('a drift there is the drift of its own process: same report, same exit code', async () => {
    const args = ['drift', '--json'];
    const there = await run(args);
    expect(await calls()).to.equal(1);
    const own = await inOwnProcess(args);
    expect(await calls()).to.equal(1);
    expect(there.exitCode).to.equal(own.exitCode);
    expect(there.exitCode).to.equal(1); // a fresh lab: every file missing
    expect(withoutTime(there.stdout)).to.deep.equal(withoutTime(own.stdout));
    expect(there.stderr).to.equal(own.stderr);
  });

  it('a usage error there: the same line on stderr, exit 2', async () => {
    const there = await run(['drift', '--host', 'node-9']);
    const own = await inOwnProcess(['drift', '--host', 'node-9']);
    expect(there.exitCode).to.equal(2);
    expect(own.exitCode).to.equal(2);
    expect(there.stderr).to.equal(own.stderr);
    expect(there.stderr).to.match(/unknown host "node-9"/);
  });

  it('each call has its own environment and working directory', async () => {
    const other = join(lab.tmp, 'other-repo');
    execFileSync('git', ['clone', '-q', lab.document.repo, other]);
    const before = await calls();
    const a = json<{ repo: string }>(await run(['validate', '--json']));
    const b = json<{ repo: string }>(await run(['validate', '--json'], { FLEET_REPO: other }));
    expect(a.repo).to.match(/\/lab\/repo$/);
    expect(b.repo).to.match(/\/other-repo$/);
    const cwd = join(lab.tmp, 'cwd');
    mkdirSync(cwd);
    const reported = await run(['drift', '--report-dir', 'reports'], {}, cwd);
    expect(reported.stderr).to.match(/report written: reports\/drift\.json/);
    expect(readdirSync(join(cwd, 'reports')).sort()).to.deep.equal([
      'drift.html',
      'drift.json',
      'drift.md',
    ]);
    expect(await calls()).to.equal(before + 3);
  });

  it('an install there writes what it writes in its own process', async () => {
    const installed = await run(['config', 'install', 'node-01', 'harness-policy', '--confirm']);
    expect(installed.exitCode, installed.stderr).to.equal(0);
    const check = await inOwnProcess(['drift', '--host', 'node-01', '--domain', 'harness-policy']);
    expect(check.exitCode, check.stdout).to.equal(0);
  });

  it('what it does not run, runs in its own process', async () => {
    const before = await calls();
    const version = await run(['version', '--json']);
    expect(version.exitCode).to.equal(0);
    expect(await calls()).to.equal(before);
  });

  it('a socket directory others may enter is not used, and a resident is not started in it', async () => {
    const dir = join(runtime, 'fleet');
    const before = await calls();
    chmodSync(dir, 0o750);
    try {
      const drift: FleetRun = await run(['drift', '--json'], { FLEET_RESIDENT: 'auto' });
      expect(drift.exitCode).to.equal(1);
      const start = await run(['resident', 'start']);
      expect(start.exitCode).to.equal(2);
      expect(start.stderr).to.equal(
        `Error: ${dir} has mode 750, not 700: it must be yours alone (mode 700)\n`,
      );
    } finally {
      chmodSync(dir, 0o700);
    }
    expect(await calls()).to.equal(before);
  });

  it('changed code on disk: the call runs in its own process and the resident ends', async () => {
    const { pid } = await status();
    // The user's plugin list, as `fleet plugins install` writes it: the plugins may have changed.
    mkdirSync(env['FLEET_DATA_DIR'] as string, { recursive: true });
    writeFileSync(
      join(env['FLEET_DATA_DIR'] as string, 'package.json'),
      `${JSON.stringify({ private: true, oclif: { schema: 1, plugins: [] }, dependencies: {} })}\n`,
    );
    const drift = await run(['drift', '--json']);
    expect(drift.exitCode, drift.stderr).to.equal(1);
    await waitFor(() => !pidAlive(pid ?? 0), 10_000, 'the resident to end');
    expect(await status()).to.deep.equal({ running: false });
    const log = readdirSync(join(runtime, 'fleet')).find((name) => name.endsWith('.log'));
    expect(readFileSync(join(runtime, 'fleet', log ?? ''), 'utf8')).to.match(
      /ends: the code on disk changed since it started/,
    );
  });

  it('busy with a call: another runs in its own process; Ctrl-C ends the call and the resident', async () => {
    expect((await run(['resident', 'start'])).exitCode).to.equal(0);
    const { pid } = await status();
    // node-02's controller stopped (SIGSTOP): its socket takes connections and never answers.
    const stopped = lab.host('node-02').pid;
    process.kill(stopped, 'SIGSTOP');
    try {
      const child = spawn(process.execPath, [FLEET_BIN, 'drift', '--json'], {
        cwd: lab.tmp,
        env: { ...process.env, ...env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      await waitFor(async () => (await status()).busy === true, 10_000, 'the drift to run there');
      const validate = await run(['validate', '--json']);
      expect(validate.exitCode).to.equal(0);
      expect(await calls()).to.equal(1);
      child.kill('SIGINT');
      expect(await exited).to.equal(130);
      await waitFor(() => !pidAlive(pid ?? 0), 10_000, 'the resident to end');
    } finally {
      process.kill(stopped, 'SIGCONT');
    }
  });

  it('FLEET_RESIDENT=auto: a call that finds none starts one as it ends; a killed one is replaced', async () => {
    expect(await status()).to.deep.equal({ running: false });
    const auto = { FLEET_RESIDENT: 'auto' };
    // manual (the default): the call runs in its own process and leaves nothing behind.
    expect((await run(['validate', '--json'])).exitCode).to.equal(0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await status()).to.deep.equal({ running: false });
    const first = await run(['drift', '--json'], auto);
    expect(first.exitCode).to.equal(1);
    expect(first.stderr).to.equal(''); // not a terminal: no word of it
    await waitFor(async () => (await status()).running, 20_000, 'the resident the call started');
    const { pid, socket } = await status();
    const second = await run(['drift', '--json'], auto);
    expect(withoutTime(second.stdout)).to.deep.equal(withoutTime(first.stdout));
    expect(await calls()).to.equal(1);
    // Killed outright, it leaves its socket; the next call finds nobody there and starts another.
    process.kill(pid ?? 0, 'SIGKILL');
    await waitFor(() => !pidAlive(pid ?? 0), 10_000, 'the resident to die');
    expect(existsSync(socket ?? '')).to.equal(true);
    expect((await run(['validate', '--json'], auto)).exitCode).to.equal(0);
    await waitFor(async () => (await status()).running, 20_000, 'a new resident');
    expect((await status()).pid).not.to.equal(pid);
    // A runtime directory of another user (`sudo -E` keeps the invoking user's): nothing made in
    // it, nothing started. Only root can give a directory away.
    if (process.getuid?.() === 0) {
      const theirs = join(lab.tmp, 'their-runtime');
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      const call = await run(['validate', '--json'], { ...auto, XDG_RUNTIME_DIR: theirs });
      expect(call.exitCode).to.equal(0);
      expect(readdirSync(theirs)).to.deep.equal([]);
      // Nor does `resident start`: it refuses, in one line, before it makes anything.
      const start = await run(['resident', 'start'], { XDG_RUNTIME_DIR: theirs });
      expect(start.exitCode).to.equal(2);
      expect(start.stderr).to.match(/XDG_RUNTIME_DIR .* belongs to uid 65534, not 0: /);
      expect(start.stderr.trim().split('\n')).to.have.length(1);
      expect(readdirSync(theirs)).to.deep.equal([]);
    }
  });

  it('stop ends it and removes its socket', async () => {
    expect((await run(['resident', 'start'])).exitCode).to.equal(0);
    const { socket } = await status();
    const stop = await run(['resident', 'stop']);
    expect(stop.stdout).to.match(/^Stopped your resident process \(pid \d+, 0 calls\)\.\n$/);
    expect(existsSync(socket ?? '')).to.equal(false);
    expect(await status()).to.deep.equal({ running: false });
  });
});
