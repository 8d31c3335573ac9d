/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * Two runtime operations at once on one node (contract §12; catalogue 33): the second gets
 * `LOCKED` naming the holder; the lock outlives a `kill -9` of its holder and is then found stale,
 * as it is when taken before a reboot (another boot id) or when its pid now belongs to another
 * process (another start time); a live holder is never robbed, and a second caller never reads a
 * half-written lock. The holder is a real second process (test/fixtures/hold-runtime-lock.js),
 * the stage requests go to a real controller.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { SYSTEM_TOOLS, requireSystemTools, skipForEnvironment } from '@fleet/testkit';
import {
  holderAlive,
  runtimeLockHolder,
  runtimeLockPath,
  thisHost,
  withRuntimeLock,
  type HostProbe,
  type LockOwner,
} from '../src/generations/lock.js';
import { RuntimeJournal, lastTransaction } from '../src/generations/journal.js';
import { startNode, type TestNode } from './support/node.js';
import { stageBody, stagingPolicy, stagingRegistry } from './support/staging.js';

const HOLDER = fileURLToPath(new URL('../../test/fixtures/hold-runtime-lock.js', import.meta.url));

/** Starts the holder; resolves once it holds the lock of `home`, with the pid that holds it. */
function startHolder(
  home: string,
  under: readonly string[] = [],
): Promise<{ child: ChildProcess; pid: number }> {
  const argv = [...under, process.execPath, HOLDER];
  const child = spawn(argv[0] as string, argv.slice(1), {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', FIXTURE_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: a kill reaches the holder under strace too
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const held = /^held (\d+)/.exec(chunk.toString());
      if (held) resolve({ child, pid: Number(held[1]) });
    });
    child.once('exit', (code) => reject(new Error(`the holder exited (${String(code)})`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

/** A process that stays alive (and is not this one) while the test needs a live pid. */
function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
}

async function plantLock(home: string, owner: Partial<LockOwner> & { pid: number }) {
  await mkdir(join(home, '.local/state/fleet'), { recursive: true, mode: 0o700 });
  const lock = { bootId: thisHost.bootId, started: null, lockId: 'planted', ...owner, at: '' };
  await writeFile(runtimeLockPath(home), `${JSON.stringify(lock)}\n`, { mode: 0o600 });
}

async function lockedError(home: string): Promise<string> {
  try {
    await withRuntimeLock(home, () => Promise.resolve());
  } catch (error) {
    expect(isFleetError(error) && error.code, String(error)).to.equal('LOCKED');
    return (error as Error).message;
  }
  throw new Error('expected LOCKED');
}

describe('the runtime lock (catalogue 33)', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  let node: TestNode;
  let token: string;

  beforeEach(async () => {
    node = await startNode({ registry: await stagingRegistry(), policy: stagingPolicy() });
    token = await node.issue(['runtime:upgrade']);
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL'); // not a group leader (a sleeper)
        }
      }
      await exited(child);
    }
    await node.dispose();
  });

  it('judges a holder by boot id, liveness and start time (a table)', () => {
    const host = (alive: boolean, started: number | null): HostProbe => ({
      bootId: 'boot-now',
      alive: () => alive,
      started: () => started,
    });
    const owner = (bootId: string | null, started: number | null): LockOwner => ({
      pid: 4242,
      bootId,
      started,
      lockId: 'x',
    });
    const cases: [string, LockOwner, HostProbe, boolean][] = [
      ['this boot, alive, same start', owner('boot-now', 100), host(true, 100), true],
      ['this boot, no such process', owner('boot-now', 100), host(false, null), false],
      ['an earlier boot, the pid alive now', owner('boot-then', 100), host(true, 100), false],
      ['this boot, the pid reused', owner('boot-now', 100), host(true, 250), false],
      ['a bare pid of earlier versions, alive', owner(null, null), host(true, 7), true],
      ['start time unknown here (not Linux)', owner('boot-now', 100), host(true, null), true],
    ];
    for (const [what, lock, probe, expected] of cases) {
      expect(holderAlive(lock, probe), what).to.equal(expected);
    }
  });

  it('a stage request while another runtime operation holds the lock: LOCKED naming it, nothing staged', async () => {
    const holder = await startHolder(node.home);
    children.push(holder.child);
    const answer = await node.call('/v1/runtime/stage', { token, body: stageBody('2.0.0') });
    expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([423, 'LOCKED']);
    expect(answer.body.error.message).to.contain(`pid ${holder.pid}`);
    const runtimeDir = join(node.home, '.local/share/fleet/runtime/generations');
    expect(await readdir(runtimeDir).catch(() => [])).to.deep.equal([]);
    expect(await runtimeLockHolder(node.home)).to.equal(holder.pid);
  });

  it('a stage under another supervisor than the node policy names: SUPERVISOR_MISMATCH, nothing staged', async () => {
    await node.setPolicy({
      ...stagingPolicy(),
      supervisor: { kind: 'windows-task', task: '\\fleet-controller' },
    });
    const answer = await node.call('/v1/runtime/stage', { token, body: stageBody('2.0.0') });
    expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([
      503,
      'SUPERVISOR_MISMATCH',
    ]);
    expect(answer.body.error.message).to.contain('says windows-task runs this controller');
    const runtimeDir = join(node.home, '.local/share/fleet/runtime/generations');
    expect(await readdir(runtimeDir).catch(() => [])).to.deep.equal([]);
  });

  it('a runner killed after `accepted`, before `end`: the next stage closes that transaction and stages', async () => {
    const first = await node.call('/v1/runtime/stage', { token, body: stageBody('2.0.0') });
    expect(first.status, first.text).to.equal(200);
    const buildId = first.body.buildId as string;
    const journal = new RuntimeJournal(node.home);
    const txn = lastTransaction(await journal.readTrusted());
    if (txn === null) throw new Error('no transaction after a stage');
    // What a runner journals up to its outcome; then it is killed: no `end`.
    await journal.append(txn.id, 'activated', { buildId, previous: null });
    await journal.append(txn.id, 'supervisor-restarted', { supervisor: 'lab', pid: null });
    await journal.append(txn.id, 'accepted', { buildId });

    const next = await node.call('/v1/runtime/stage', { token, body: stageBody('2.0.1') });
    expect(next.status, next.text).to.equal(200);
    const records = (await journal.readTrusted()).records;
    const closed = records.filter((r) => r.txn === txn.id).map((r) => r.step);
    expect(closed.slice(-2)).to.deep.equal(['accepted', 'end']);
    expect(records.at(-1)?.step).to.equal('staged'); // the new transaction, staged
  });

  it('kill -9 of the holder: the lock stays behind, is found stale, and the next stage request stages', async () => {
    const holder = await startHolder(node.home);
    holder.child.kill('SIGKILL');
    await exited(holder.child);
    const left = await readFile(runtimeLockPath(node.home), 'utf8');
    expect(JSON.parse(left)).to.include({ pid: holder.pid });
    expect(await runtimeLockHolder(node.home)).to.equal(null);
    const answer = await node.call('/v1/runtime/stage', { token, body: stageBody('2.0.0') });
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.buildId).to.match(/^[0-9a-f]{64}$/);
    expect(await readFile(runtimeLockPath(node.home), 'utf8').catch(() => 'released')).to.equal(
      'released',
    );
  });

  it('a lock taken before a reboot is stale, though a process with its pid is alive now', async function () {
    if (thisHost.bootId === null) {
      skipForEnvironment(this, 'no boot id here (/proc/sys/kernel/random/boot_id): pid only');
    }
    const live = sleeper();
    children.push(live);
    await plantLock(node.home, { pid: live.pid as number, bootId: 'an-earlier-boot' });
    await withRuntimeLock(node.home, () => Promise.resolve());
  });

  it('a lock whose pid now belongs to another process (it started later) is stale', async function () {
    const live = sleeper();
    children.push(live);
    const started = thisHost.started(live.pid as number);
    if (started === null) skipForEnvironment(this, 'no /proc/<pid>/stat here: pid liveness only');
    await plantLock(node.home, { pid: live.pid as number, started: (started as number) - 1 });
    await withRuntimeLock(node.home, () => Promise.resolve());
  });

  it('a live holder of this boot, and a bare pid of earlier versions, are respected: LOCKED', async () => {
    const live = sleeper();
    children.push(live);
    const pid = live.pid as number;
    await plantLock(node.home, { pid, started: thisHost.started(pid) });
    expect(await lockedError(node.home)).to.contain(`pid ${pid}`);
    await writeFile(runtimeLockPath(node.home), `${pid}\n`);
    expect(await lockedError(node.home)).to.contain(`pid ${pid}`);
  });

  it('a second caller never reads a half-written lock and takes it for a dead one (strace delays the holder)', async function () {
    requireSystemTools(this, [SYSTEM_TOOLS.strace], "delays the holder's writes with strace");
    try {
      execFileSync('strace', ['-f', '-o', '/dev/null', 'true'], { stdio: 'ignore' });
    } catch {
      skipForEnvironment(this, 'strace cannot trace here (ptrace is not permitted)', ['strace']);
    }
    const lock = runtimeLockPath(node.home);
    await mkdir(join(node.home, '.local/state/fleet'), { recursive: true, mode: 0o700 });
    // Every write the holder makes to the lock path waits 3 s: a lock created empty and written
    // afterwards would sit empty that long.
    const holding = startHolder(node.home, [
      'strace',
      '-f',
      '-o',
      '/dev/null',
      '-e',
      'inject=write,pwrite64:delay_enter=3s',
      '-P',
      lock,
      '--',
    ]);
    for (let i = 0; i < 1500 && (await stat(lock).catch(() => null)) === null; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const message = await lockedError(node.home);
    const holder = await holding;
    children.push(holder.child);
    expect(message).to.contain(`pid ${holder.pid}`);
  });
});
