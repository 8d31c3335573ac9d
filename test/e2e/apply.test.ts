/**
 * `fleet apply` end to end on a lab fleet (contract §7, issue 15), through the real binary and real
 * controllers. One lab for the file, the runs in order:
 *
 * - a fresh lab: without --confirm the plan is printed, exit 2, nothing written on any node; with
 *   --confirm every host installs (receipts in `fleet.apply/v1`), exit 0; again: all current;
 * - a diverged file is refused (exit 7, its bytes untouched) while the same host's other stale
 *   file and the other hosts are installed;
 * - a saved plan (--out) installs exactly with --plan … --confirm; a live file moved after --out,
 *   or a new commit, refuses with exit 3 before anything is sent to any host;
 * - a host that accepts connections and never answers is reported unreachable (exit 5) within the
 *   per-host timeout, and the others are installed;
 * - drift, apply and harness reconcile print each host's lines as it answers: while that host
 *   hangs, the others' lines are already out and stderr names the host waited for.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { applyDocumentSchema, applyPlanSchema, type ApplyDocument } from '@fleet/core';
import { readFile } from 'node:fs/promises';
import { FLEET_BIN, json } from '../src/fleet.js';
import { Lab, POLICY, ROUTER, ROUTER_CANONICAL, stampTree } from './lab-fixture.js';

const notState = (relative: string) =>
  relative === '.local/state' || relative.startsWith('.local/state/');
/** A node's home, its state directory aside: what an apply that sends nothing must leave alone. */
const notStateStamp = (lab: Lab) => (name: string) => stampTree(lab.home(name), notState);

describe('e2e: fleet apply on a lab fleet', function () {
  this.timeout(180_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-e2e-apply-');
    await lab.up(3);
  });
  after(async () => {
    await lab?.destroy();
  });

  async function apply(...args: string[]): Promise<{ exitCode: number; doc: ApplyDocument }> {
    const run = await lab.run(['apply', ...args, '--json']);
    const doc = applyDocumentSchema.parse(json(run));
    return { exitCode: run.exitCode, doc };
  }
  const hostOf = (doc: ApplyDocument, host: string) => {
    const found = doc.hosts.find((h) => h.host === host);
    if (!found) throw new Error(`no ${host} in the apply document`);
    return found;
  };
  const routerEdit = (n: number) => (text: string) => `${text}# release ${n}\n`;

  it('without --confirm: the plan over every host, exit 2, nothing written', async () => {
    const before = await Promise.all(['node-01', 'node-02', 'node-03'].map(notStateStamp(lab)));
    const { exitCode, doc } = await apply();
    expect(exitCode).to.equal(2);
    expect(doc.confirmed).to.equal(false);
    expect(doc.hosts.map((h) => h.outcome)).to.deep.equal(['planned', 'planned', 'planned']);
    // 3 hosts × 6 files: every bundled domain's, the files domain's example entry included.
    expect(doc.summary.install).to.equal(18);
    for (const host of doc.hosts) {
      for (const domain of host.domains) expect(domain.receipt).to.equal(undefined);
    }
    const after = await Promise.all(['node-01', 'node-02', 'node-03'].map(notStateStamp(lab)));
    expect(after).to.deep.equal(before);
  });

  it('--confirm installs every host, one receipt per host and domain; a second run finds all current', async () => {
    const { exitCode, doc } = await apply('--confirm');
    expect(exitCode).to.equal(0);
    expect(doc.exitCode).to.equal(0);
    expect(doc.hosts.map((h) => h.outcome)).to.deep.equal(['installed', 'installed', 'installed']);
    for (const host of doc.hosts) {
      expect(host.domains.map((d) => d.receipt?.outcome)).to.deep.equal([
        'installed',
        'installed',
        'installed',
        'installed',
      ]);
      expect(host.domains.every((d) => d.receipt?.verified)).to.equal(true);
    }
    const router = await lab.readNode('node-02', ROUTER);
    expect(router.toString()).to.equal(lab.renderAt('HEAD', ROUTER_CANONICAL, 'node-02'));
    const again = await apply('--confirm');
    expect(again.exitCode).to.equal(0);
    expect(again.doc.hosts.map((h) => h.outcome)).to.deep.equal(['current', 'current', 'current']);
  });

  it('a diverged file is refused (exit 7, untouched); the same host’s stale file and the other hosts are installed', async () => {
    await lab.commitEdit(ROUTER_CANONICAL, routerEdit(2), 'router: release 2');
    const edited = `${(await lab.readNode('node-01', POLICY)).toString()}my own line\n`;
    await lab.writeNode('node-01', POLICY, edited);
    const { exitCode, doc } = await apply('--confirm');
    expect(exitCode).to.equal(7);
    const one = hostOf(doc, 'node-01');
    expect(one.outcome).to.equal('refused');
    const policy = one.domains.flatMap((d) => d.files).find((f) => f.path === POLICY);
    expect(policy).to.include({ state: 'diverged', decision: 'refused' });
    expect((await lab.readNode('node-01', POLICY)).toString()).to.equal(edited);
    const router = one.domains.find((d) => d.domain === 'router');
    expect(router?.receipt?.outcome).to.equal('installed');
    expect(hostOf(doc, 'node-02').outcome).to.equal('installed');
    expect(hostOf(doc, 'node-03').outcome).to.equal('installed');
  });

  it('--out saves a plan bound to the commit and the live sha256s; --plan … --confirm installs exactly it', async () => {
    await lab.commitEdit(ROUTER_CANONICAL, routerEdit(3), 'router: release 3');
    const out = join(lab.tmp, 'plan-1.json');
    const { exitCode } = await apply('--out', out);
    expect(exitCode).to.equal(2);
    const plan = applyPlanSchema.parse(JSON.parse(await readFile(out, 'utf8')));
    expect(plan.repoCommit).to.equal(lab.git('rev-parse', 'HEAD').trim());
    const planned = plan.hosts.flatMap((h) =>
      h.domains.flatMap((d) => d.files.filter((f) => f.decision === 'install')),
    );
    expect(planned.map((f) => f.path)).to.deep.equal([ROUTER, ROUTER, ROUTER]);
    // A second --out to the same file is refused: a saved plan is never overwritten.
    const again = await lab.run(['apply', '--out', out, '--json']);
    expect(again.exitCode).to.equal(2);
    expect(json<{ error: { code: string } }>(again).error.code).to.equal('USAGE');
    const installed = await apply('--plan', out, '--confirm');
    expect(installed.exitCode, JSON.stringify(installed.doc.hosts)).to.equal(7); // node-01's diverged file
    expect(installed.doc.planFile).to.equal(out);
    for (const host of ['node-01', 'node-02', 'node-03']) {
      const router = hostOf(installed.doc, host).domains.find((d) => d.domain === 'router');
      expect(router?.receipt?.outcome, host).to.equal('installed');
    }
  });

  it('--plan refuses with exit 3 when a planned live file moved, and when the repository moved: nothing sent', async () => {
    await lab.commitEdit(ROUTER_CANONICAL, routerEdit(4), 'router: release 4');
    const out = join(lab.tmp, 'plan-2.json');
    expect((await apply('--out', out)).exitCode).to.equal(2);
    // Someone at node-03 changes the router file after the plan was made.
    const moved = `${(await lab.readNode('node-03', ROUTER)).toString()}# local\n`;
    await lab.writeNode('node-03', ROUTER, moved);
    const before = await Promise.all(['node-01', 'node-02'].map(notStateStamp(lab)));
    const run = await lab.run(['apply', '--plan', out, '--confirm', '--json']);
    expect(run.exitCode).to.equal(3);
    const envelope = json<{ error: { code: string; message: string } }>(run);
    expect(envelope.error.code).to.equal('PRECONDITION_FAILED');
    expect(envelope.error.message).to.include('node-03');
    expect(await Promise.all(['node-01', 'node-02'].map(notStateStamp(lab)))).to.deep.equal(before);
    expect((await lab.readNode('node-03', ROUTER)).toString()).to.equal(moved);

    // A new commit after the plan: PLAN_MISMATCH, exit 3.
    const out2 = join(lab.tmp, 'plan-3.json');
    expect((await apply('--out', out2)).exitCode).to.equal(2);
    await lab.commitEdit(ROUTER_CANONICAL, routerEdit(5), 'router: release 5');
    const stale = await lab.run(['apply', '--plan', out2, '--confirm', '--json']);
    expect(stale.exitCode).to.equal(3);
    expect(json<{ error: { code: string } }>(stale).error.code).to.equal('PLAN_MISMATCH');
    expect(await Promise.all(['node-01', 'node-02'].map(notStateStamp(lab)))).to.deep.equal(before);
  });

  it('a host that never answers is unreachable (exit 5) within the timeout; the others are installed', async () => {
    const held: Socket[] = [];
    const blackHole = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const port = (blackHole.address() as AddressInfo).port;
    try {
      const url = lab.host('node-02').controller;
      await lab.commitEdit(
        'fleet.yaml',
        (text) => text.replace(JSON.stringify(url), JSON.stringify(`http://127.0.0.1:${port}`)),
        'node-02: controller moved',
      );
      await lab.commitEdit(ROUTER_CANONICAL, routerEdit(6), 'router: release 6');
      const started = Date.now();
      const { exitCode, doc } = await apply('--confirm', '--force', '--timeout', '1500');
      expect(Date.now() - started, 'bounded by the per-host timeout').to.be.below(20_000);
      expect(exitCode).to.equal(5);
      expect(hostOf(doc, 'node-02').outcome).to.equal('unreachable');
      expect(hostOf(doc, 'node-01').outcome).to.equal('installed');
      expect(hostOf(doc, 'node-03').outcome).to.equal('installed');
      expect((await lab.readNode('node-03', ROUTER)).toString()).to.equal(
        lab.renderAt('HEAD', ROUTER_CANONICAL, 'node-03'),
      );
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });

  describe('streaming: a hung host holds back only its own line', () => {
    const held: Socket[] = [];
    let blackHole: ReturnType<typeof createServer>;
    let port = 0;

    before(async () => {
      blackHole = createServer((socket) => held.push(socket));
      await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
      port = (blackHole.address() as AddressInfo).port;
      await lab.commitEdit(
        'fleet.yaml',
        (text) =>
          text.replace(
            /(node-02:\n\s+controller: )"http:\/\/127\.0\.0\.1:\d+"/,
            `$1"http://127.0.0.1:${port}"`,
          ),
        'node-02: controller is a black hole',
      );
    });
    after(async () => {
      const closed = blackHole?.listening
        ? new Promise((resolve) => blackHole.close(resolve))
        : Promise.resolve();
      for (const socket of held) socket.destroy();
      await closed;
    });

    /**
     * Runs fleet with a per-host timeout far beyond the test's: it waits (no clock) until stdout
     * has node-01's and node-03's lines and stderr names node-02 as waited for, checks node-02's
     * line is not out yet and the process still runs, then lets node-02 fail (connections
     * refused and cut) and collects the rest.
     */
    async function streamed(args: readonly string[]) {
      const child = spawn(process.execPath, [FLEET_BIN, ...args, '--timeout', '600000'], {
        cwd: lab.tmp,
        env: { ...process.env, ...lab.env, NO_COLOR: '1', FLEET_RESIDENT: 'off' },
      });
      let stdout = '';
      let stderr = '';
      let exited = false;
      const exit = new Promise<number>((resolve) =>
        child.on('exit', (code) => {
          exited = true;
          resolve(code ?? -1);
        }),
      );
      const others = /^node-01 /m;
      const third = /^node-03 /m;
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (others.test(stdout) && third.test(stdout) && stderr.includes('waiting for node-02'))
            resolve();
        };
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          check();
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          check();
        });
        void exit.then(() => reject(new Error(`exited before streaming: ${stdout}\n${stderr}`)));
        // Not a speed check: a run that never streams would otherwise hang until mocha's timeout.
        setTimeout(() => {
          child.kill();
          reject(new Error(`no streamed lines in 120 s:\n${stdout}\n${stderr}`));
        }, 120_000).unref();
      });
      const early = stdout;
      const stillRunning = !exited;
      // node-02 now fails fast: no new connection is accepted, the held one is cut (a server
      // closes only once its connections have ended).
      const closed = new Promise((resolve) => blackHole.close(resolve));
      for (const socket of held.splice(0)) socket.destroy();
      await closed;
      const code = await exit;
      // The black hole listens again for the next verb, on the same port.
      blackHole = createServer((socket) => held.push(socket));
      await new Promise<void>((resolve) => blackHole.listen(port, '127.0.0.1', resolve));
      return { early, stillRunning, stdout, code };
    }

    for (const verb of [['drift'], ['apply', '--confirm'], ['harness', 'reconcile', '--confirm']]) {
      it(`fleet ${verb.join(' ')}`, async () => {
        const run = await streamed(verb);
        expect(run.stillRunning, 'the others were printed while node-02 hung').to.equal(true);
        expect(run.early).to.not.match(/^node-02 /m);
        expect(run.stdout).to.match(/^node-02 /m);
        expect(run.code).to.not.equal(0);
      });
    }
  });
});
