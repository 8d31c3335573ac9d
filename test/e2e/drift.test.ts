/**
 * `fleet drift` and `fleet config plan` end to end on a lab fleet (issue 4; contract §7, §8.1–8.3):
 * every classification a node can show — missing, current, stale, diverged, unsupported — and a
 * host whose controller is down (unreachable, the run goes on, exit 5), one that refuses the
 * credentials (denied, exit 4); a plan that writes nothing
 * and names the live sha256; dated report files, and no files at all without --report-dir.
 *
 * One lab for the file: node-01 is installed then edited locally, node-02 holds older published
 * versions and files the node cannot hold, node-03 stays fresh until its controller is stopped.
 */
import { expect } from 'chai';
import { readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  driftReportSchema,
  receiptSchema,
  type DomainPlan,
  type DriftHost,
  type DriftReport,
} from '@fleet/core';
import { fleet, json, pidAlive, waitFor } from '../src/fleet.js';
import {
  AGENTS,
  GEMINI,
  FILES_DEMO,
  Lab,
  POLICY,
  POLICY_CANONICAL,
  ROUTER,
  ROUTER_CANONICAL,
  TRANSPORT,
  sha256,
  stampTree,
} from './lab-fixture.js';

const ALL_PATHS = [POLICY, AGENTS, GEMINI, ROUTER, TRANSPORT, FILES_DEMO];

function hostOf(report: DriftReport, name: string): DriftHost {
  const host = report.hosts.find((h) => h.host === name);
  if (!host) throw new Error(`no host ${name} in the report`);
  return host;
}

function itemOf(report: DriftReport, name: string, path: string) {
  const item = hostOf(report, name).items.find((i) => i.layer === 'file' && i.path === path);
  if (!item) throw new Error(`no file item ${path} for ${name}`);
  return item;
}

describe('e2e: drift and plan on a lab fleet', function () {
  this.timeout(120_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-e2e-drift-');
    await lab.up(3);
  });
  after(async () => {
    await lab?.destroy();
  });

  /** `fleet drift ARGS --json`, validated against the fleet.drift/v1 schema. */
  async function drift(...args: string[]): Promise<{ exitCode: number; report: DriftReport }> {
    const run = await lab.run(['drift', ...args, '--json']);
    const report = driftReportSchema.parse(json(run));
    expect(report.schema).to.equal('fleet.drift/v1');
    return { exitCode: run.exitCode, report };
  }

  it('a fresh lab: every managed file of every host is missing (exit 1)', async () => {
    const { exitCode, report } = await drift();
    expect(exitCode).to.equal(1);
    expect(report.repoCommit).to.equal(lab.git('rev-parse', 'HEAD').trim());
    expect(report.canonicalVersion).to.match(/^\d+\.\d+\.\d+/);
    expect(Number.isNaN(Date.parse(report.generatedAt))).to.equal(false);
    expect(report.summary).to.deep.equal({
      hosts: 3,
      current: 0,
      drifted: 3,
      unreachable: 0,
      denied: 0,
      errors: 0,
    });
    expect(report.hosts.map((h) => h.host)).to.deep.equal(['node-01', 'node-02', 'node-03']);
    for (const host of report.hosts) {
      expect(host.status).to.equal('drifted');
      const files = host.items.filter((i) => i.layer === 'file');
      expect(files.map((i) => i.path).sort()).to.deep.equal([...ALL_PATHS].sort());
      for (const item of files) expect(item.state, `${host.host} ${item.path}`).to.equal('missing');
    }
  });

  it('usage errors exit 2: an unknown host or domain', async () => {
    const host = await lab.run(['drift', '--host', 'node-99', '--json']);
    expect(host.exitCode).to.equal(2);
    expect(json<{ error: { exitCode: number } }>(host).error.exitCode).to.equal(2);
    const domain = await lab.run(['drift', '--domain', 'no-such-domain', '--json']);
    expect(domain.exitCode).to.equal(2);
  });

  it('current after `config install … --confirm` (drift exits 0 for what is current)', async () => {
    const install = await lab.run([
      'config',
      'install',
      'node-01',
      'harness-policy',
      '--confirm',
      '--json',
    ]);
    expect(install.exitCode, install.stdout + install.stderr).to.equal(0);
    const receipt = receiptSchema.parse(json<{ receipt: unknown }>(install).receipt);
    expect(receipt).to.include({
      schema: 'fleet.receipt/v1',
      outcome: 'installed',
      verified: true,
    });

    const { exitCode, report } = await drift('--host', 'node-01', '--domain', 'harness-policy');
    expect(exitCode).to.equal(0);
    expect(report.summary).to.include({ hosts: 1, current: 1, drifted: 0 });
    const host = hostOf(report, 'node-01');
    expect(host.status).to.equal('current');
    expect(host.items.map((i) => [i.path, i.state])).to.deep.equal([
      [POLICY, 'current'],
      [AGENTS, 'current'],
      [GEMINI, 'current'],
    ]);
    // The other domains of the host are still missing: the whole-host drift is 1.
    const whole = await drift('--host', 'node-01');
    expect(whole.exitCode).to.equal(1);
    expect(itemOf(whole.report, 'node-01', ROUTER).state).to.equal('missing');
  });

  it('stale: an older published version (of a plain file and of a host-rendered one) names its commit', async () => {
    const policyVersions = lab.versionsOf(POLICY_CANONICAL);
    const routerVersions = lab.versionsOf(ROUTER_CANONICAL);
    expect(policyVersions).to.have.length(3);
    expect(routerVersions).to.have.length(3);
    const policyCommit = policyVersions[1] as string; // one release behind
    const routerCommit = routerVersions[2] as string; // the first version, two releases behind
    await lab.writeNode('node-02', POLICY, lab.renderAt(policyCommit, POLICY_CANONICAL, 'node-02'));
    const router = lab.renderAt(routerCommit, ROUTER_CANONICAL, 'node-02');
    expect(router).to.include('node: node-02');
    await lab.writeNode('node-02', ROUTER, router);

    const { exitCode, report } = await drift('--host', 'node-02');
    expect(exitCode).to.equal(1);
    for (const [path, commit] of [
      [POLICY, policyCommit],
      [ROUTER, routerCommit],
    ] as const) {
      const item = itemOf(report, 'node-02', path);
      expect(item.state, path).to.equal('stale');
      expect(item.detail, path).to.include(commit.slice(0, 12));
      expect(item.localLines ?? 0).to.equal(0);
      expect(item.diff, path).to.be.a('string').and.include('@@');
    }
  });

  it('diverged: one appended line gives localLines 1 and lists that line', async () => {
    const before = await lab.readNode('node-01', POLICY);
    const lineCount = before.toString('utf8').split('\n').length - 1;
    await lab.writeNode(
      'node-01',
      POLICY,
      `${before.toString('utf8')}- a rule only this host has\n`,
    );

    const { exitCode, report } = await drift('--host', 'node-01', '--domain', 'harness-policy');
    expect(exitCode).to.equal(1);
    expect(hostOf(report, 'node-01').status).to.equal('drifted');
    const item = itemOf(report, 'node-01', POLICY);
    expect(item.state).to.equal('diverged');
    expect(item.localLines).to.equal(1);
    expect(item.lines).to.deep.equal([
      { line: lineCount + 1, text: '- a rule only this host has' },
    ]);
    expect(item.detail).to.match(/adopt/);
    expect(item.diff).to.include('-- a rule only this host has');
    // The block files untouched by the edit stay current.
    expect(itemOf(report, 'node-01', AGENTS).state).to.equal('current');
  });

  it('unsupported: binary (NUL) and invalid UTF-8 in managed files, reported not guessed', async () => {
    await lab.writeNode('node-02', GEMINI, Buffer.from('# policy\n\u0000binary\n', 'utf8'));
    await lab.writeNode('node-02', AGENTS, Buffer.from([0x23, 0x20, 0xff, 0xfe, 0xc3, 0x28, 0x0a]));

    const { exitCode, report } = await drift('--host', 'node-02', '--domain', 'harness-policy');
    expect(exitCode).to.equal(1);
    expect(hostOf(report, 'node-02').status).to.equal('drifted');
    const gemini = itemOf(report, 'node-02', GEMINI);
    const agents = itemOf(report, 'node-02', AGENTS);
    expect(gemini.state).to.equal('unsupported');
    expect(agents.state).to.equal('unsupported');
    expect(gemini.detail).to.match(/FORMAT_UNSUPPORTED|binary/);
    expect(agents.detail).to.match(/ENCODING_INVALID|UTF-8/);
    expect(itemOf(report, 'node-02', POLICY).state).to.equal('stale');
  });

  it('config plan writes nothing and names the live sha256 it was made against', async () => {
    const notState = (relative: string) =>
      relative === '.local/state' || relative.startsWith('.local/state/');
    const homeBefore = await stampTree(lab.home('node-02'), notState);
    const backupsBefore = await stampTree(lab.backupsDir('node-02'));
    const backupEntries = await readdir(lab.backupsDir('node-02'), { recursive: true });
    const head = lab.git('rev-parse', 'HEAD');
    expect(lab.git('status', '--porcelain', '--ignored')).to.equal('');

    const all = await lab.run(['config', 'plan', 'node-02', '--json']);
    expect(all.exitCode, all.stderr).to.equal(0);
    const plans = json<{ plans: DomainPlan[] }>(all).plans;
    expect(plans.map((p) => p.domain).sort()).to.deep.equal([
      'files',
      'harness-policy',
      'router',
      'transport-identity',
    ]);
    for (const plan of plans) {
      expect(plan.schema).to.equal('fleet.plan/v1');
      expect(plan).to.include({ host: 'node-02', repoCommit: head.trim(), changes: true });
    }
    const byPath = new Map(plans.flatMap((p) => p.files.map((f) => [f.path, f] as const)));
    const policyBytes = await lab.readNode('node-02', POLICY);
    const routerBytes = await lab.readNode('node-02', ROUTER);
    expect(byPath.get(POLICY)?.liveSha256).to.equal(sha256(policyBytes));
    expect(byPath.get(POLICY)?.item.state).to.equal('stale');
    expect(byPath.get(POLICY)?.desired).to.equal(lab.renderAt('HEAD', POLICY_CANONICAL, 'node-02'));
    expect(byPath.get(ROUTER)?.liveSha256).to.equal(sha256(routerBytes));
    expect(byPath.get(ROUTER)?.desired).to.equal(lab.renderAt('HEAD', ROUTER_CANONICAL, 'node-02'));
    expect(byPath.get(TRANSPORT)).to.include({ liveSha256: null });
    expect(byPath.get(TRANSPORT)?.item.state).to.equal('missing');
    expect(byPath.get(GEMINI)?.item.state).to.equal('unsupported');
    const router = plans.find((p) => p.domain === 'router');
    expect(router?.actions.map((a) => a.kind)).to.deep.equal(['write-volume', 'reload']);
    expect(plans.find((p) => p.domain === 'harness-policy')?.actions).to.deep.equal([]);

    const one = await lab.run(['config', 'plan', 'node-02', 'harness-policy', '--json']);
    expect(one.exitCode, one.stderr).to.equal(0);
    expect(json<{ plans: DomainPlan[] }>(one).plans.map((p) => p.domain)).to.deep.equal([
      'harness-policy',
    ]);
    const human = await lab.run(['config', 'plan', 'node-02', 'harness-policy']);
    expect(human.exitCode, human.stderr).to.equal(0);
    expect(human.stdout).to.include(sha256(policyBytes).slice(0, 12));

    expect(await stampTree(lab.home('node-02'), notState)).to.deep.equal(homeBefore);
    expect(await stampTree(lab.backupsDir('node-02'))).to.deep.equal(backupsBefore);
    expect(await readdir(lab.backupsDir('node-02'), { recursive: true })).to.deep.equal(
      backupEntries,
    );
    expect(lab.git('rev-parse', 'HEAD')).to.equal(head);
    expect(lab.git('status', '--porcelain', '--ignored')).to.equal('');
  });

  it('config plan of a domain the host does not run, or an unknown host: exit 2', async () => {
    const domain = await lab.run(['config', 'plan', 'node-02', 'no-such-domain', '--json']);
    expect(domain.exitCode).to.equal(2);
    const host = await lab.run(['config', 'plan', 'node-99', '--json']);
    expect(host.exitCode).to.equal(2);
  });

  it('--report-dir writes drift.json/md/html, then drift-2.* without touching the first', async () => {
    const dir = join(lab.tmp, 'reports', 'drift', 'today');
    const first = await lab.run(['drift', '--report-dir', dir]);
    expect(first.exitCode, first.stderr).to.equal(1);
    expect((await readdir(dir)).sort()).to.deep.equal(['drift.html', 'drift.json', 'drift.md']);
    const firstFiles = await stampTree(dir);

    const report = driftReportSchema.parse(
      JSON.parse(await readFile(join(dir, 'drift.json'), 'utf8')),
    );
    expect(report.summary).to.include({ hosts: 3, drifted: 3 });
    expect(itemOf(report, 'node-01', POLICY).state).to.equal('diverged');
    const md = await readFile(join(dir, 'drift.md'), 'utf8');
    const html = await readFile(join(dir, 'drift.html'), 'utf8');
    for (const name of ['node-01', 'node-02', 'node-03']) {
      expect(md).to.include(name);
      expect(html).to.include(name);
    }
    expect(html).to.match(/<html/i);
    // Self-contained: nothing fetched from elsewhere.
    expect(html).not.to.match(/<script[^>]+src=|<link[^>]+href=|<img[^>]+src="?https?:/i);

    const second = await lab.run(['drift', '--report-dir', dir, '--json']);
    expect(second.exitCode).to.equal(1);
    expect((await readdir(dir)).sort()).to.deep.equal([
      'drift-2.html',
      'drift-2.json',
      'drift-2.md',
      'drift.html',
      'drift.json',
      'drift.md',
    ]);
    const again = await stampTree(dir);
    for (const name of ['drift.html', 'drift.json', 'drift.md'])
      expect(again[name]).to.deep.equal(firstFiles[name]);
    // The file is the --json document without `repository`: no operator's path in the repo's
    // reports.
    const { repository, ...document } = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(repository).to.equal(await realpath(lab.repo));
    expect(JSON.parse(await readFile(join(dir, 'drift-2.json'), 'utf8'))).to.deep.equal(document);
  });

  it('without --report-dir drift writes no file: the repo stays clean, wherever it is run from', async () => {
    const repoBefore = await stampTree(lab.repo, (r) => r === '.git');
    const tmpBefore = (await readdir(lab.tmp)).sort();
    expect(lab.git('status', '--porcelain', '--ignored')).to.equal('');
    const fromTmp = await lab.run(['drift']);
    expect(fromTmp.exitCode).to.equal(1);
    const fromRepo = await fleet(['drift', '--json'], { cwd: lab.repo, env: lab.env });
    lab.runs.push({ ...fromRepo, args: ['drift', '--json'] });
    expect(fromRepo.exitCode).to.equal(1);
    expect(lab.git('status', '--porcelain', '--ignored')).to.equal('');
    expect(await stampTree(lab.repo, (r) => r === '.git')).to.deep.equal(repoBefore);
    expect((await readdir(lab.tmp)).sort()).to.deep.equal(tmpBefore);
  });

  it('a host that refuses the credentials is denied, and exit 4 outranks drift (contract §7)', async () => {
    // node-02's token replaced by one its controller never issued: AUTH_INVALID (exit 4).
    const refused = join(lab.tmp, 'credentials-refused.json');
    const credentials = structuredClone(lab.credentials);
    const entry = credentials.hosts['node-02'];
    if (!entry) throw new Error('no node-02 in the lab credentials');
    entry.token = 'f'.repeat(48);
    await writeFile(refused, JSON.stringify(credentials), { mode: 0o600 });
    const run = await fleet(['drift', '--json'], {
      cwd: lab.tmp,
      env: { ...lab.env, FLEET_CREDENTIALS: refused },
    });
    expect(run.exitCode, run.stderr).to.equal(4);
    const report = driftReportSchema.parse(json(run));
    expect(hostOf(report, 'node-02').status).to.equal('denied');
    expect(hostOf(report, 'node-02').detail).to.match(/^AUTH_INVALID: /);
    // The others keep their own state.
    expect(hostOf(report, 'node-01').status).to.not.equal('denied');
    expect(report.summary.denied).to.equal(1);
  });

  it('a host whose controller is down is unreachable; the run goes on for the others (exit 5)', async () => {
    // Stop node-03's supervisor with its controller: the lab supervisor leads its process group.
    const state = JSON.parse(
      await readFile(join(lab.dir, 'nodes', 'node-03', 'supervisor.json'), 'utf8'),
    ) as { pid: number; supervisorPid: number };
    const cmdline = await readFile(`/proc/${state.supervisorPid}/cmdline`, 'utf8');
    expect(cmdline).to.include(lab.dir);
    const stat = await readFile(`/proc/${state.supervisorPid}/stat`, 'utf8');
    const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    expect(pgid).to.equal(state.supervisorPid);
    process.kill(-pgid, 'SIGKILL');
    await waitFor(
      () => !pidAlive(state.pid) && !pidAlive(state.supervisorPid),
      10_000,
      "node-03's supervisor and controller to stop",
    );

    const started = Date.now();
    const { exitCode, report } = await drift();
    expect(Date.now() - started).to.be.below(30_000);
    expect(exitCode, 'an unreachable host outranks drift (contract §7)').to.equal(5);
    expect(report.summary).to.deep.equal({
      hosts: 3,
      current: 0,
      drifted: 2,
      unreachable: 1,
      denied: 0,
      errors: 0,
    });
    const down = hostOf(report, 'node-03');
    expect(down.status).to.equal('unreachable');
    expect(down.items).to.deep.equal([]);
    expect(down.detail).to.include('HOST_UNREACHABLE');
    // The others were still asked and classified.
    expect(itemOf(report, 'node-01', POLICY).state).to.equal('diverged');
    expect(itemOf(report, 'node-02', POLICY).state).to.equal('stale');

    // A verb on that one host says so with exit 5.
    const plan = await lab.run(['config', 'plan', 'node-03', '--json']);
    expect(plan.exitCode).to.equal(5);
    expect(json<{ error: { code: string } }>(plan).error.code).to.equal('HOST_UNREACHABLE');
  });
  it('a host that accepts connections but never answers is unreachable within the per-host timeout', async () => {
    // A black hole: accepts TCP, never answers HTTP. node-03's controller is pointed at it.
    const held: Socket[] = [];
    const blackHole = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const port = (blackHole.address() as AddressInfo).port;
    try {
      const url = lab.host('node-03').controller;
      await lab.commitEdit(
        'fleet.yaml',
        (text) => text.replace(JSON.stringify(url), JSON.stringify(`http://127.0.0.1:${port}`)),
        'node-03: controller moved',
      );
      const started = Date.now();
      const { exitCode, report } = await drift('--timeout', '1500');
      const elapsed = Date.now() - started;
      expect(exitCode).to.equal(5);
      expect(elapsed, 'bounded by the per-host timeout').to.be.below(15_000);
      expect(hostOf(report, 'node-03').status).to.equal('unreachable');
      expect(report.summary).to.include({ hosts: 3, drifted: 2, unreachable: 1 });
      const plan = await lab.run(['config', 'plan', 'node-03', '--timeout', '1000', '--json']);
      expect(plan.exitCode).to.equal(5);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });
});
