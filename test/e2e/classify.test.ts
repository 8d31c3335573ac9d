/**
 * History-aware classification end to end on a lab fleet (contract §8.2, §8.5, §10.3;
 * docs/classification.md), through the real binary and real controllers:
 *
 * - a file fleet wrote from a feature branch, or from a commit later amended, is `stale` back on
 *   main (known by the node's record) and healed by reconcile;
 * - a file fleet installed and someone deleted is `deleted`: reconcile, even `--unattended`,
 *   never recreates it; install refuses it (DELETED) until `--force`, which recreates it;
 * - history follows a `git mv` of the canonical, and a `--no-ff` merge counts like a fast-forward;
 * - the field report's scenario: a host offline across a consolidation heals as `stale`, a local
 *   line refuses;
 * - one source of truth: an uncommitted template edit is named, not used, and `validate` says it
 *   checked the working tree;
 * - `adopt --dry-run` writes nothing; `adopt --promote` refuses to put other hosts into drift
 *   unless accepted, then the adopted host is `current`;
 * - one function: a canonical the installer refuses is an error in drift, install and reconcile.
 *
 * One lab for the file; each test brings the hosts it uses to a known state first.
 */
import { expect } from 'chai';
import { rm, writeFile, readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { driftReportSchema, type DomainPlan, type DriftReport } from '@fleet/core';
import { json } from '../src/fleet.js';
import { AGENTS, Lab, POLICY, POLICY_CANONICAL, sha256 } from './lab-fixture.js';

interface ReconcileDoc {
  hosts: {
    host: string;
    state: string;
    targets: { path: string; state: string; drift: string }[];
  }[];
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('e2e: history-aware classification on a lab fleet', function () {
  this.timeout(240_000);
  let lab: Lab;
  let main: string;

  before(async () => {
    lab = await Lab.create('fleet-e2e-classify-');
    await lab.up(3);
    main = lab.git('rev-parse', '--abbrev-ref', 'HEAD').trim();
  });
  after(async () => {
    await lab?.destroy();
  });

  const commit = (message: string): string => {
    lab.git('add', '--all');
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      message,
    );
    return lab.git('rev-parse', 'HEAD').trim();
  };
  const canonicalFile = () => join(lab.repo, ...POLICY_CANONICAL.split('/'));
  const drift = async (host: string): Promise<DriftReport> => {
    const run = await lab.run(['drift', '--host', host, '--domain', 'harness-policy', '--json']);
    expect([0, 1], run.stderr).to.include(run.exitCode);
    return driftReportSchema.parse(json(run));
  };
  const itemOf = (report: DriftReport, path: string) => {
    const item = report.hosts[0]?.items.find((i) => i.path === path);
    if (!item) throw new Error(`no item for ${path}`);
    return item;
  };
  const reconcile = async (...args: string[]) => {
    const run = await lab.run(['harness', 'reconcile', ...args, '--json']);
    return { run, doc: json<ReconcileDoc>(run) };
  };
  /** Brings a host's harness-policy files to the desired content (fleet writes them). */
  const installCurrent = async (host: string) => {
    const run = await lab.run([
      'config',
      'install',
      host,
      'harness-policy',
      '--confirm',
      '--force',
    ]);
    expect(run.exitCode, run.stderr).to.equal(0);
  };

  it("a file fleet wrote from a feature branch is stale back on main, as fleet's own write, and healed", async () => {
    await installCurrent('node-01');
    lab.git('checkout', '-q', '-b', 'feature');
    await lab.commitEdit(
      POLICY_CANONICAL,
      (t) => `${t}- a rule only the feature branch has\n`,
      'feature: a rule',
    );
    const fromBranch = await lab.run([
      'config',
      'install',
      'node-01',
      'harness-policy',
      '--file',
      POLICY,
      '--confirm',
    ]);
    expect(fromBranch.exitCode, fromBranch.stderr).to.equal(0);
    lab.git('checkout', '-q', main);

    const item = itemOf(await drift('node-01'), POLICY);
    expect(item.state).to.equal('stale');
    expect(item.version?.kind).to.equal('installed');
    expect(item.detail).to.contain('the content fleet installed at');
    const healed = await reconcile('--host', 'node-01', '--confirm');
    expect(healed.doc.hosts[0]?.state).to.equal('updated');
    expect(itemOf(await drift('node-01'), POLICY).state).to.equal('current');
  });

  it('a file fleet wrote from a commit later amended is stale, and healed', async () => {
    await installCurrent('node-02');
    await lab.commitEdit(POLICY_CANONICAL, (t) => `${t}- a rule soon amended\n`, 'policy: a rule');
    const installed = await lab.run([
      'config',
      'install',
      'node-02',
      'harness-policy',
      '--file',
      POLICY,
      '--confirm',
    ]);
    expect(installed.exitCode, installed.stderr).to.equal(0);
    const text = await readFile(canonicalFile(), 'utf8');
    await writeFile(
      canonicalFile(),
      text.replace('- a rule soon amended\n', '- the rule as amended\n'),
    );
    lab.git('add', '--all');
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '--amend',
      '--no-edit',
    );

    const item = itemOf(await drift('node-02'), POLICY);
    expect(item.state).to.equal('stale');
    expect(item.version?.kind).to.equal('installed');
    expect((await reconcile('--host', 'node-02', '--confirm')).doc.hosts[0]?.state).to.equal(
      'updated',
    );
    expect((await lab.readNode('node-02', POLICY)).toString('utf8')).to.contain(
      '- the rule as amended',
    );
  });

  it('a deleted installed file is deleted: reconcile, even unattended, never recreates it; install --force does', async () => {
    await installCurrent('node-03');
    await rm(lab.nodePath('node-03', AGENTS));
    const item = itemOf(await drift('node-03'), AGENTS);
    expect(item.state).to.equal('deleted');
    expect(item.detail).to.contain('install --force');

    const confirmed = await reconcile('--host', 'node-03', '--confirm');
    expect(confirmed.doc.hosts[0]?.state).to.equal('deleted');
    expect(confirmed.doc.hosts[0]?.targets.find((t) => t.path === AGENTS)?.state).to.equal(
      'deleted',
    );
    await lab.commitEdit(
      'fleet.yaml',
      (t) =>
        t.replace('harness-policy: { unattended: deny }', 'harness-policy: { unattended: allow }'),
      'harness-policy: unattended allow',
    );
    const unattended = await reconcile('--host', 'node-03', '--unattended');
    expect(unattended.run.exitCode, unattended.run.stderr).to.equal(1);
    expect(unattended.doc.hosts[0]?.state).to.equal('deleted');
    await lab.commitEdit(
      'fleet.yaml',
      (t) =>
        t.replace('harness-policy: { unattended: allow }', 'harness-policy: { unattended: deny }'),
      'harness-policy: unattended deny',
    );
    await readFile(lab.nodePath('node-03', AGENTS)).then(
      () => expect.fail('reconcile recreated a deleted file'),
      (error: NodeJS.ErrnoException) => expect(error.code).to.equal('ENOENT'),
    );

    const refused = await lab.run(['config', 'install', 'node-03', 'harness-policy', '--confirm']);
    expect(refused.exitCode).to.equal(7);
    expect(refused.stderr).to.contain(`--file ${AGENTS} --confirm --force`);
    const refusedJson = await lab.run([
      'config',
      'install',
      'node-03',
      'harness-policy',
      '--confirm',
      '--json',
    ]);
    expect(json<{ error: { code: string } }>(refusedJson).error.code).to.equal('DELETED');
    await installCurrent('node-03');
    expect(itemOf(await drift('node-03'), AGENTS).state).to.equal('current');
  });

  it('history follows a git mv of the canonical file', async () => {
    const canonical = await readFile(canonicalFile(), 'utf8');
    const renamed = 'domains/harness-policy/POLICY.md';
    lab.git('mv', POLICY_CANONICAL, renamed);
    const underOldName = `${canonical}- a rule from when the file was POLICY.md\n`;
    await writeFile(join(lab.repo, ...renamed.split('/')), underOldName);
    const version = commit('policy: kept as POLICY.md for a while');
    // Back under its name, edited in the same commit (git still sees the rename).
    lab.git('mv', renamed, POLICY_CANONICAL);
    await writeFile(canonicalFile(), `${underOldName}- and one more, back as CLAUDE.md\n`);
    commit('policy: back to CLAUDE.md');
    // That content was only ever published under the old name; no record of it on the node.
    await lab.writeNode('node-01', POLICY, underOldName);
    const item = itemOf(await drift('node-01'), POLICY);
    expect(item.state).to.equal('stale');
    expect(item.version).to.include({ kind: 'commit', commit: version });
  });

  it('a topic branch merged with --no-ff counts like a fast-forward', async () => {
    lab.git('checkout', '-q', '-b', 'topic');
    const draft = await lab.commitEdit(
      POLICY_CANONICAL,
      (t) => `${t}- a topic draft rule\n`,
      'topic: draft',
    );
    const draftContent = lab.git('show', `${draft}:${POLICY_CANONICAL}`);
    await lab.commitEdit(
      POLICY_CANONICAL,
      (t) => t.replace('- a topic draft rule', '- the topic rule'),
      'topic: final',
    );
    lab.git('checkout', '-q', main);
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'merge',
      '-q',
      '--no-ff',
      '-m',
      'merge topic',
      'topic',
    );
    // The topic's draft is off the first-parent line: only a --no-ff-aware history knows it.
    await lab.writeNode('node-03', POLICY, draftContent);
    const item = itemOf(await drift('node-03'), POLICY);
    expect(item.state).to.equal('stale');
    expect(item.version).to.include({ kind: 'commit', commit: draft });
  });

  it("the field report's scenario: a host offline across a consolidation heals as stale; a local line refuses — and a deleted line too", async () => {
    for (const host of ['node-01', 'node-02', 'node-03']) await installCurrent(host);
    const local = `${(await lab.readNode('node-01', POLICY)).toString('utf8')}- a line only node-01 has\n`;
    await lab.writeNode('node-01', POLICY, local);
    // Beyond the field report, which took a deleted line for history: a hand change, refused.
    const lines = (await lab.readNode('node-03', POLICY)).toString('utf8').split('\n');
    const shorter = lines
      .filter((line, i) => i !== lines.findIndex((l) => l.startsWith('- ')))
      .join('\n');
    await lab.writeNode('node-03', POLICY, shorter);
    const url = lab.host('node-02').controller;
    const port = await closedPort();
    await lab.commitEdit(
      'fleet.yaml',
      (t) => t.replace(url, `http://127.0.0.1:${port}`),
      'node-02 offline',
    );
    await lab.commitEdit(
      POLICY_CANONICAL,
      (t) => t.replace(/^- .*$/gm, (line) => `${line} (consolidated)`),
      'policy: a consolidation rewrites every rule',
    );
    const away = await reconcile('--confirm');
    expect(away.doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'diverged'],
      ['node-02', 'offline_pending'],
      ['node-03', 'modified'],
    ]);
    await lab.commitEdit(
      'fleet.yaml',
      (t) => t.replace(`http://127.0.0.1:${port}`, url),
      'node-02 back',
    );
    const back = await reconcile('--confirm');
    expect(back.doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'diverged'],
      ['node-02', 'updated'],
      ['node-03', 'modified'],
    ]);
    expect(back.doc.hosts[1]?.targets.find((t) => t.path === POLICY)?.drift).to.equal('stale');
    expect((await lab.readNode('node-01', POLICY)).toString('utf8')).to.equal(local);
    expect((await lab.readNode('node-03', POLICY)).toString('utf8')).to.equal(shorter);
  });

  it('one source of truth: an uncommitted template edit is named and not used; validate checks the working tree', async () => {
    await installCurrent('node-02');
    const committed = await readFile(canonicalFile(), 'utf8');
    await writeFile(canonicalFile(), `${committed}- not committed yet\n`);
    try {
      const human = await lab.run(['drift', '--host', 'node-02', '--domain', 'harness-policy']);
      expect(human.stdout.split('\n')[0]).to.match(
        /^repository \/\S+ commit [0-9a-f]{12} \(HEAD\)$/,
      );
      expect(human.stderr)
        .to.contain('uncommitted changes are not used')
        .and.contain(POLICY_CANONICAL);
      const report = await drift('node-02');
      expect(report.uncommitted).to.deep.equal([POLICY_CANONICAL]);
      expect(itemOf(report, POLICY).state).to.equal('current');
      const plan = await lab.run(['config', 'plan', 'node-02', 'harness-policy', '--json']);
      expect(json<{ plans: DomainPlan[] }>(plan).plans[0]?.uncommitted).to.deep.equal([
        POLICY_CANONICAL,
      ]);
      const validate = await lab.run(['validate', '--json']);
      expect(json(validate)).to.include({ checked: 'working-tree' });
      expect(json<{ uncommitted: string[] }>(validate).uncommitted).to.deep.equal([
        POLICY_CANONICAL,
      ]);
    } finally {
      await writeFile(canonicalFile(), committed);
    }
  });

  it("adopt --dry-run writes nothing; --promote refuses other hosts' drift unless accepted, then the host is current", async () => {
    for (const host of ['node-01', 'node-02', 'node-03']) await installCurrent(host);
    const adopted = `${(await lab.readNode('node-03', POLICY)).toString('utf8')}- a rule node-03 found worth keeping\n`;
    await lab.writeNode('node-03', POLICY, adopted);
    const head = lab.git('rev-parse', 'HEAD').trim();

    const dry = await lab.run([
      'config',
      'adopt',
      'node-03',
      POLICY,
      '--promote',
      '--dry-run',
      '--accept-drift-on',
      'node-01',
      '--accept-drift-on',
      'node-02',
    ]);
    expect(dry.exitCode, dry.stderr).to.equal(0);
    expect(dry.stdout)
      .to.contain(`Fleet-Promoted-To: ${POLICY_CANONICAL}`)
      .and.contain('+- a rule node-03 found worth keeping');
    expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);
    expect(lab.git('status', '--porcelain')).to.equal('');

    const refused = await lab.run(['config', 'adopt', 'node-03', POLICY, '--promote', '--json']);
    expect(refused.exitCode).to.equal(7);
    const error = json<{ error: { code: string; message: string } }>(refused).error;
    expect(error.code).to.equal('PROMOTE_REFUSED');
    expect(error.message).to.contain('node-01').and.contain('node-02');
    expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);

    const promoted = await lab.run([
      'config',
      'adopt',
      'node-03',
      POLICY,
      '--promote',
      '--accept-drift-on',
      'node-01',
      '--accept-drift-on',
      'node-02',
      '--json',
    ]);
    expect(promoted.exitCode, promoted.stderr).to.equal(0);
    const message = lab.git('log', '-1', '--format=%B');
    expect(message)
      .to.contain(`Fleet-Promoted-To: ${POLICY_CANONICAL}`)
      .and.contain('Fleet-Accepted-Drift: node-01, node-02');
    expect(await readFile(canonicalFile(), 'utf8')).to.equal(adopted);
    const after = await drift('node-03');
    expect(after.hosts[0]?.items.map((i) => [i.path, i.state])).to.deep.include([
      POLICY,
      'current',
    ]);
    expect(itemOf(await drift('node-01'), POLICY).state).to.equal('stale');
  });

  it('one function: a canonical the installer refuses is an error in drift, install and reconcile', async () => {
    await installCurrent('node-02');
    const before = sha256(await lab.readNode('node-02', POLICY));
    await lab.commitEdit(
      POLICY_CANONICAL,
      (t) => `${t}Never edit what follows <!-- fleet:harness-policy:begin --> by hand.\n`,
      'policy: a line that mentions the marker',
    );
    const item = itemOf(await drift('node-02'), POLICY);
    expect(item.state).to.equal('error');
    expect(item.detail).to.contain('marker');
    const install = await lab.run([
      'config',
      'install',
      'node-02',
      'harness-policy',
      '--confirm',
      '--force',
      '--json',
    ]);
    // The installer's check refuses the rendering: RENDER_FAILED, exit 2 (contract §7).
    expect(install.exitCode, install.stdout).to.equal(2);
    expect(JSON.parse(install.stdout)).to.have.nested.property('error.code', 'RENDER_FAILED');
    const reconciled = await reconcile('--host', 'node-02', '--confirm');
    expect(reconciled.doc.hosts[0]?.state).to.equal('error');
    expect(sha256(await lab.readNode('node-02', POLICY))).to.equal(before);
  });
});
