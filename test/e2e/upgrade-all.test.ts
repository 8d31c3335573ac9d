/**
 * `fleet upgrade --all` over three lab hosts (issue 36 item 4): a second build made by
 * `fleet lab build --version … --canonical` (packed, signed by the lab's key), node-02's own
 * policy trusting no key — its node refuses the stage — and the run: node-01 first (the canary),
 * accepted; node-02 refused, which stops the run; node-03 never started, untouched. Then the
 * same over `--host`, once node-02 trusts the key again, and every host current (exit 3).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { json } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

interface UpgradeDocument {
  schema: string;
  confirmed: boolean;
  canary: string | null;
  stoppedAt: string | null;
  summary: Record<string, number>;
  hosts: {
    host: string;
    outcome: string;
    exitCode: number;
    canary: boolean;
    transaction?: string;
    error?: { code: string; message: string };
  }[];
  exitCode: number;
}

const VERSION = '0.1.0-all.2';

describe('fleet upgrade --all over three lab hosts: a canary, then the rest, stopping at the first failure', function () {
  this.timeout(900_000);
  let lab: Lab;
  let trusting: string;

  const policyFile = () => join(lab.home('node-02'), '.config', 'fleet', 'node-policy.yaml');

  before(async () => {
    lab = await Lab.create('fleet-upgrade-all-');
    await lab.up(3);
    const built = await lab.run([
      'lab',
      'build',
      '--dir',
      lab.dir,
      '--version',
      VERSION,
      '--canonical',
    ]);
    expect(built.exitCode, built.stderr + built.stdout).to.equal(0);
    // node-02's owner trusts no release key: its node refuses any runtime change.
    trusting = await readFile(policyFile(), 'utf8');
    const distrusting = trusting.replace(
      /^(\s*)trustedKeys:.*\n(?:\1\s*- .*\n)*/m,
      '$1trustedKeys: []\n',
    );
    expect(distrusting).to.not.equal(trusting);
    await writeFile(policyFile(), distrusting);
  });
  after(async () => {
    await lab?.destroy();
  });

  it('without --confirm: every host planned, nothing sent (exit 2)', async () => {
    const planned = await lab.run(['upgrade', '--all']);
    expect(planned.exitCode, planned.stderr).to.equal(2);
    for (const host of ['node-01', 'node-02', 'node-03']) {
      expect(planned.stdout).to.match(new RegExp(`^${host}  planned`, 'm'));
    }
    expect(planned.stdout).to.match(/^node-01 {2}planned {2}\(canary\)/m);
    expect(planned.stdout).to.match(/^3 hosts: 3 planned$/m);
    expect(planned.stderr).to.match(/run again with --confirm/);
    const identity = await lab.client('node-01').identity();
    expect(identity.version).to.not.equal(VERSION);
  });

  it('--confirm --concurrency 1: node-01 accepted, node-02 refused, node-03 skipped and untouched', async () => {
    const run = await lab.run(['upgrade', '--all', '--confirm', '--concurrency', '1', '--json']);
    const document = json<UpgradeDocument>(run);
    expect(document.schema).to.equal('fleet.upgrade/v1');
    expect(document.canary).to.equal('node-01');
    const [first, second, third] = document.hosts;
    expect(first, run.stderr).to.deep.include({
      host: 'node-01',
      outcome: 'accepted',
      canary: true,
    });
    expect(second?.host).to.equal('node-02');
    expect(second?.outcome).to.equal('failed');
    expect(second?.exitCode).to.equal(7);
    expect(second?.error?.code).to.match(/SIGNATURE_INVALID|ARTIFACT_UNSIGNED|BOOTSTRAP_REFUSED/);
    expect(third).to.deep.include({ host: 'node-03', outcome: 'skipped' });
    expect(document.stoppedAt).to.equal('node-02');
    expect(document.summary).to.deep.include({ hosts: 3, accepted: 1, failed: 1, skipped: 1 });
    // The most urgent code: node-02's refusal by policy.
    expect(run.exitCode, run.stderr).to.equal(7);
    expect(document.exitCode).to.equal(7);
    // Progress on stderr: each line names its host, and its steps name the transaction.
    expect(run.stderr).to.match(
      new RegExp(`^node-01: transaction ${first?.transaction ?? '?'}: accepted: `, 'm'),
    );
    expect(run.stderr).to.not.match(/^node-03: /m);

    expect((await lab.client('node-01').identity()).version).to.equal(VERSION);
    expect((await lab.client('node-02').identity()).version).to.not.equal(VERSION);
    // node-03: never asked to stage, its journal empty.
    const untouched = await lab.client('node-03').runtimeStatus({});
    expect(untouched.transaction).to.equal(null);
    expect((await lab.client('node-03').identity()).version).to.not.equal(VERSION);
  });

  it('again, human: node-01 current, the same stop, one line per host and a summary', async () => {
    const run = await lab.run(['upgrade', '--all', '--confirm', '--concurrency', '1']);
    expect(run.exitCode, run.stderr).to.equal(7);
    const lines = run.stdout.trim().split('\n');
    expect(lines.at(-4)).to.match(/^node-01 {2}current {2}\(canary\)/);
    expect(lines.at(-3)).to.match(/^node-02 {2}failed {2}/);
    expect(lines.at(-2)).to.match(/^node-03 {2}skipped {2}not started: the run stopped at node-02/);
    expect(lines.at(-1)).to.equal('3 hosts: 1 current, 1 failed, 1 skipped; stopped at node-02');
  });

  it('--host node-02 --host node-03 once node-02 trusts the key: both accepted; then all current (exit 3)', async () => {
    await writeFile(policyFile(), trusting);
    const run = await lab.run([
      'upgrade',
      '--host',
      'node-03',
      '--host',
      'node-02',
      '--confirm',
      '--json',
    ]);
    expect(run.exitCode, run.stderr + run.stdout).to.equal(0);
    const document = json<UpgradeDocument>(run);
    // fleet.yaml's order, the first the canary.
    expect(document.hosts.map((h) => [h.host, h.outcome, h.canary])).to.deep.equal([
      ['node-02', 'accepted', true],
      ['node-03', 'accepted', false],
    ]);
    const all = await lab.run(['upgrade', '--all', '--confirm']);
    expect(all.exitCode, all.stderr).to.equal(3);
    expect(all.stdout).to.match(/^3 hosts: 3 current$/m);
  });
});
