/**
 * The `current` pointer (contract §12, catalogue 50, 53): atomic flips in both forms, observed by a
 * reader in another process that must never see ENOENT or a dangling pointer; kill -9 at the flip
 * and at every journal step, after which the status is in the allowed set.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { isFleetError, readCurrentPointer, runtimeLayout, type RuntimeLayout } from '@fleet/core';
import { removeTree, stageGeneration } from '../src/generations/generation.js';
import { RuntimeJournal } from '../src/generations/journal.js';
import { currentPointer, type PointerKind } from '../src/generations/pointer.js';
import { reconcileStatus } from '../src/generations/status.js';
import { sha256Hex } from '../src/generations/tree.js';
import { makeTgz, runtimePackage } from './support/tar.js';

const STEPS_SCRIPT = fileURLToPath(
  new URL('../../test/fixtures/runtime-steps.js', import.meta.url),
);

/** Stages two generations A and B under a fresh home. */
async function twoGenerations(): Promise<{
  home: string;
  layout: RuntimeLayout;
  a: string;
  b: string;
}> {
  const home = await mkdtemp(join(tmpdir(), 'fleet-pointer-'));
  const ids: string[] = [];
  for (const version of ['1.0.0', '2.0.0']) {
    const data = makeTgz(runtimePackage('@fleet/cli', version));
    const path = join(home, `${version}.tgz`);
    await writeFile(path, data);
    const sha256 = sha256Hex(data);
    await stageGeneration({ home, platform: 'linux', artifact: path, sha256 });
    ids.push(sha256);
  }
  return { home, layout: runtimeLayout(home, 'linux'), a: ids[0] as string, b: ids[1] as string };
}

/**
 * A reader in its own process, polling `current` in a tight loop (readlink, or read for the
 * pointer file) until a stop file appears; reports what it saw.
 */
interface PollResult {
  readonly seen: Record<string, number>;
  readonly enoent: number;
  readonly dangling: number;
  readonly garbage: number;
  readonly reads: number;
}

function startPoller(layout: RuntimeLayout, kind: PointerKind, stopFile: string) {
  const source = `
    const fs = require('node:fs');
    const [current, kind, stop, root] = process.argv.slice(1);
    const seen = {}; let enoent = 0, dangling = 0, garbage = 0, reads = 0;
    process.stdout.write('ready\\n');
    for (;;) {
      for (let i = 0; i < 200; i++) {
        reads++;
        let target;
        try {
          target = kind === 'symlink' ? fs.readlinkSync(current) : fs.readFileSync(current, 'utf8');
        } catch (e) { if (e.code === 'ENOENT') enoent++; else garbage++; continue; }
        const m = /^generations\\/([0-9a-f]{64})\\n?$/.exec(target);
        if (!m) { garbage++; continue; }
        seen[m[1]] = (seen[m[1]] || 0) + 1;
        if (i % 50 === 0 && !fs.existsSync(root + '/' + target.trim() + '/generation.json')) dangling++;
      }
      if (fs.existsSync(stop)) break;
    }
    process.stdout.write(JSON.stringify({ seen, enoent, dangling, garbage, reads }) + '\\n');
  `;
  const child = spawn(
    process.execPath,
    ['-e', source, layout.current, kind, stopFile, layout.root],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ready = new Promise<void>((resolve) => {
    const check = () => (out.startsWith('ready\n') ? resolve() : setTimeout(check, 5));
    check();
  });
  const result = new Promise<PollResult>((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`poller exited ${String(code)}`));
      else resolve(JSON.parse(out.split('\n')[1] ?? '{}') as PollResult);
    });
  });
  return { ready, result };
}

function runSteps(
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const child = spawn(process.execPath, [STEPS_SCRIPT], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, out })),
  );
}

for (const kind of ['symlink', 'file'] as const) {
  describe(`the current pointer (${kind})`, () => {
    let home: string;
    let layout: RuntimeLayout;
    let a: string;
    let b: string;

    beforeEach(async () => ({ home, layout, a, b } = await twoGenerations()));
    afterEach(() => removeTree(home));

    it('flips atomically and returns the previous generation', async () => {
      const pointer = currentPointer(layout, kind);
      expect(await pointer.flip(a)).to.deep.equal({ previous: null });
      expect(await pointer.flip(b)).to.deep.equal({ previous: a });
      expect(await readCurrentPointer(layout)).to.deep.equal({
        state: 'set',
        kind,
        buildId: b,
        target: `generations/${b}`,
      });
      if (kind === 'file')
        expect(await readFile(layout.current, 'utf8')).to.equal(`generations/${b}\n`);
      expect((await readdir(layout.root)).sort()).to.deep.equal(['current', 'generations']);
    });

    it('refuses to point at a generation that is not staged, leaving current as it was', async () => {
      const pointer = currentPointer(layout, kind);
      await pointer.flip(a);
      try {
        await pointer.flip('f'.repeat(64));
        expect.fail('expected GENERATION_INVALID');
      } catch (error) {
        expect(isFleetError(error) && (error as { code: string }).code).to.equal(
          'GENERATION_INVALID',
        );
      }
      expect(await readCurrentPointer(layout)).to.include({ buildId: a });
    });

    it('is never observed missing or dangling by a reader polling during 300 flips', async function () {
      this.timeout(120_000);
      const pointer = currentPointer(layout, kind);
      await pointer.flip(a);
      const stop = join(home, 'stop');
      const poller = startPoller(layout, kind, stop);
      await poller.ready;
      for (let i = 0; i < 300; i += 1) await pointer.flip(i % 2 === 0 ? b : a);
      await writeFile(stop, '');
      const seen = await poller.result;
      expect(seen.enoent, 'ENOENT').to.equal(0);
      expect(seen.dangling, 'dangling').to.equal(0);
      expect(seen.garbage, 'partial or foreign content').to.equal(0);
      expect(Object.keys(seen.seen).sort()).to.deep.equal([a, b].sort());
    });

    it('survives kill -9 between the temp pointer and the rename: current is still the old one', async () => {
      await currentPointer(layout, kind).flip(a);
      const killed = await runSteps({
        FIXTURE_HOME: home,
        FIXTURE_MODE: 'flip',
        FIXTURE_TARGET: b,
        FIXTURE_POINTER: kind,
        FLEET_FAILPOINT: 'runtime.flip.before_rename:kill',
      });
      expect(killed.signal).to.equal('SIGKILL');
      expect(await readCurrentPointer(layout)).to.include({ state: 'set', buildId: a });
      expect(
        (await readdir(layout.root)).some((name) => name.startsWith('.fleet-tmp-current-')),
      ).to.equal(true);
      // The next flip (after the dead holder's lock is taken over) sweeps the temp pointer.
      const again = await runSteps({
        FIXTURE_HOME: home,
        FIXTURE_MODE: 'flip',
        FIXTURE_TARGET: b,
        FIXTURE_POINTER: kind,
      });
      expect(again.out).to.equal('done\n');
      expect(await readCurrentPointer(layout)).to.include({ buildId: b });
      expect((await readdir(layout.root)).sort()).to.deep.equal(['current', 'generations']);
    });
  });
}

describe('kill -9 at every journal step (catalogue 53)', () => {
  const points = [
    'runtime.journal.begin',
    'runtime.journal.staged',
    'runtime.flip.before_rename',
    'runtime.journal.activated',
    'runtime.journal.supervisor-restarted',
    'runtime.journal.accepted',
    'runtime.journal.end',
  ];
  for (const point of points) {
    it(`${point}: the journal parses, current is the prior or the complete target, status is in the allowed set`, async () => {
      const { home, layout, a, b } = await twoGenerations();
      try {
        await currentPointer(layout, 'symlink').flip(a);
        const killed = await runSteps({
          FIXTURE_HOME: home,
          FIXTURE_MODE: 'transaction',
          FIXTURE_PRIOR: a,
          FIXTURE_TARGET: b,
          FLEET_FAILPOINT: `${point}:kill`,
        });
        expect(killed.signal, killed.out).to.equal('SIGKILL');
        const journal = await new RuntimeJournal(home).read();
        expect(journal.corrupt).to.equal(null);
        const pointer = await readCurrentPointer(layout);
        expect(pointer.state).to.equal('set');
        const current = pointer.state === 'set' ? pointer.buildId : '';
        expect([a, b]).to.include(current);
        // What runs is what current named when the process died (no supervisor in this test).
        const status = reconcileStatus(journal, { pointer, supervisor: null, identity: null });
        const last = journal.records[journal.records.length - 1]?.step;
        if (last === 'accepted' || last === 'end') {
          expect(status.state, 'journal says accepted, nothing answers').to.equal('inconsistent');
        } else {
          expect(status.state).to.equal('in-progress');
          expect(status.next).to.equal(
            current === a && !journal.records.some((r) => r.step === 'activated')
              ? 'abort'
              : 'rollback',
          );
        }
      } finally {
        await removeTree(home);
      }
    });
  }
});

describe('journal appends during a transaction run end to end', () => {
  it('runs begin → end and leaves current at the target', async () => {
    const { home, layout, a, b } = await twoGenerations();
    try {
      await currentPointer(layout, 'symlink').flip(a);
      const ran = await runSteps({
        FIXTURE_HOME: home,
        FIXTURE_MODE: 'transaction',
        FIXTURE_PRIOR: a,
        FIXTURE_TARGET: b,
      });
      expect(ran.out).to.equal('done\n');
      const journal = await new RuntimeJournal(home).read();
      expect(journal.records.map((r) => r.step)).to.deep.equal([
        'begin',
        'staged',
        'activated',
        'supervisor-restarted',
        'accepted',
        'end',
      ]);
      expect(await readCurrentPointer(layout)).to.include({ buildId: b });
      expect(await readdir(join(home, '.local/state/fleet'))).to.not.include('runtime.lock');
    } finally {
      await removeTree(home);
      await rm(home, { recursive: true, force: true });
    }
  });
});
