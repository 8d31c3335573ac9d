/**
 * `fleet config install` end to end on a lab fleet (issue 4; contract §7, §8.4, §15): the refusal
 * paths and their exit codes (no --confirm → 2, diverged without --force → 7, nothing written),
 * --force with a 0600 backup holding the old bytes, an install that changes nothing, the
 * compare-and-swap conflict (a file changed between plan and install → PRECONDITION_FAILED, exit
 * 3) driven at the client level, and two concurrent CLI installs of one domain.
 *
 * One lab for the file: node-01 for the refusal paths, node-02 for the compare-and-swap, node-03
 * for the concurrent installs.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  ControllerError,
  driftReportSchema,
  newOperationId,
  receiptSchema,
  type DomainPlan,
  type ExportResponse,
  type InventoryResponse,
  type Receipt,
} from '@fleet/core';
import { json } from '../src/fleet.js';
import {
  AGENTS,
  GEMINI,
  Lab,
  POLICY,
  POLICY_CANONICAL,
  ROUTER,
  ROUTER_CANONICAL,
  TRANSPORT,
  ULID,
  jsonLines,
  sha256,
  stampTree,
} from './lab-fixture.js';

const notState = (relative: string) =>
  relative === '.local/state' || relative.startsWith('.local/state/');

describe('e2e: config install on a lab fleet', function () {
  this.timeout(120_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-e2e-install-');
    await lab.up(3);
  });
  after(async () => {
    await lab?.destroy();
  });

  async function planOf(host: string, domain: string): Promise<DomainPlan> {
    const run = await lab.run(['config', 'plan', host, domain, '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    const [plan] = json<{ plans: DomainPlan[] }>(run).plans;
    if (!plan) throw new Error('no plan');
    return plan;
  }

  describe('refusal paths and --force (node-01)', () => {
    let desired: string;
    let firstReceipt: Receipt;

    before(() => {
      desired = lab.renderAt('HEAD', POLICY_CANONICAL, 'node-01');
    });

    it('without --confirm: prints the plan, exits 2, writes nothing', async () => {
      const homeBefore = await stampTree(lab.home('node-01'), notState);
      const run = await lab.run(['config', 'install', 'node-01', 'harness-policy', '--json']);
      expect(run.exitCode).to.equal(2);
      const answer = json<{ plan: DomainPlan; confirmed: boolean }>(run);
      expect(answer.confirmed).to.equal(false);
      expect(answer.plan.schema).to.equal('fleet.plan/v1');
      expect(answer.plan.files.map((f) => f.item.state)).to.deep.equal([
        'missing',
        'missing',
        'missing',
      ]);
      expect(await stampTree(lab.home('node-01'), notState)).to.deep.equal(homeBefore);
      expect(await stampTree(lab.backupsDir('node-01'))).to.deep.equal({});
      const human = await lab.run(['config', 'install', 'node-01', 'harness-policy']);
      expect(human.exitCode).to.equal(2);
      expect(human.stderr).to.match(/--confirm/);
      expect(await stampTree(lab.home('node-01'), notState)).to.deep.equal(homeBefore);
    });

    it('with --confirm: installs and prints a fleet.receipt/v1, recorded by node and operator', async () => {
      const run = await lab.run([
        'config',
        'install',
        'node-01',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
      firstReceipt = receiptSchema.parse(json<{ receipt: unknown }>(run).receipt);
      expect(firstReceipt).to.include({
        schema: 'fleet.receipt/v1',
        host: 'node-01',
        domain: 'harness-policy',
        outcome: 'installed',
        verified: true,
      });
      expect(firstReceipt.operationId).to.match(ULID);
      expect(firstReceipt.files.map((f) => f.path)).to.deep.equal([POLICY, AGENTS, GEMINI]);
      for (const file of firstReceipt.files) {
        expect(file).to.include({ beforeSha256: null, backupPath: null, state: 'written' });
        expect(file.afterSha256).to.equal(sha256(await lab.readNode('node-01', file.path)));
      }
      expect((await lab.readNode('node-01', POLICY)).toString('utf8')).to.equal(desired);

      const audit = await readFile(lab.auditLog('node-01'), 'utf8');
      expect(audit).to.include(firstReceipt.operationId);
      const operator = await jsonLines<{
        verb: string;
        operationId: string;
        outcome: string;
        exitCode: number;
      }>(lab.operatorLog);
      expect(operator.find((r) => r.operationId === firstReceipt.operationId)).to.deep.include({
        verb: 'config install',
        outcome: 'ok',
        exitCode: 0,
      });
      expect((await stat(lab.operatorLog)).mode & 0o777).to.equal(0o600);
    });

    it('installing what is already live writes nothing: unchanged, same inode and mtime, no backup', async () => {
      const before = await stat(lab.nodePath('node-01', POLICY));
      const run = await lab.run([
        'config',
        'install',
        'node-01',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(run.exitCode, run.stderr).to.equal(0);
      const receipt = receiptSchema.parse(json<{ receipt: unknown }>(run).receipt);
      expect(receipt.outcome).to.equal('unchanged');
      expect(receipt.files.every((f) => f.state === 'unchanged' && f.backupPath === null)).to.equal(
        true,
      );
      const after = await stat(lab.nodePath('node-01', POLICY));
      expect([after.ino, after.mtimeMs]).to.deep.equal([before.ino, before.mtimeMs]);
      expect(await stampTree(lab.backupsDir('node-01'))).to.deep.equal({});
    });

    it('a diverged file without --force: exit 7, file bytes unchanged, no new backup', async () => {
      await lab.writeNode('node-01', POLICY, `${desired}- keep the build green on Fridays\n`);
      const bytes = await lab.readNode('node-01', POLICY);
      const inode = (await stat(lab.nodePath('node-01', POLICY))).ino;
      const run = await lab.run([
        'config',
        'install',
        'node-01',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(run.exitCode).to.equal(7);
      const { error } = json<{ error: { code: string; exitCode: number; message: string } }>(run);
      expect(error).to.include({ code: 'DIVERGED', exitCode: 7 });
      expect(error.message).to.include(POLICY);
      expect(await lab.readNode('node-01', POLICY)).to.deep.equal(bytes);
      expect((await stat(lab.nodePath('node-01', POLICY))).ino).to.equal(inode);
      expect(await stampTree(lab.backupsDir('node-01'))).to.deep.equal({});
      // --file names the same file: still refused.
      const one = await lab.run([
        'config',
        'install',
        'node-01',
        'harness-policy',
        '--file',
        POLICY,
        '--confirm',
      ]);
      expect(one.exitCode).to.equal(7);
      expect(await lab.readNode('node-01', POLICY)).to.deep.equal(bytes);
    });

    it('--force installs it; the receipt names a 0600 backup holding the old bytes', async () => {
      const old = await lab.readNode('node-01', POLICY);
      const run = await lab.run([
        'config',
        'install',
        'node-01',
        'harness-policy',
        '--confirm',
        '--force',
        '--json',
      ]);
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
      const receipt = receiptSchema.parse(json<{ receipt: unknown }>(run).receipt);
      expect(receipt.outcome).to.equal('installed');
      const file = receipt.files.find((f) => f.path === POLICY);
      expect(file).to.include({
        state: 'written',
        beforeSha256: sha256(old),
        afterSha256: sha256(desired),
      });
      expect(file?.backupPath).to.be.a('string');
      const backup = lab.nodePath('node-01', file?.backupPath as string);
      expect(backup.startsWith(lab.backupsDir('node-01'))).to.equal(true);
      expect(file?.backupPath)
        .to.match(/\d{8}T\d{6}Z/)
        .and.include(receipt.operationId);
      expect((await stat(backup)).mode & 0o777).to.equal(0o600);
      expect((await stat(dirname(backup))).mode & 0o777).to.equal(0o700);
      expect(await readFile(backup)).to.deep.equal(old);
      expect((await lab.readNode('node-01', POLICY)).toString('utf8')).to.equal(desired);
      // The block files were already current: untouched.
      expect(receipt.files.filter((f) => f.path !== POLICY).map((f) => f.state)).to.deep.equal([
        'unchanged',
        'unchanged',
      ]);
      expect(Object.keys(await stampTree(lab.backupsDir('node-01')))).to.have.length(1);
    });

    it('the node holds backups and its audit log no wider than 0600', async () => {
      expect((await stat(lab.auditLog('node-01'))).mode & 0o777).to.equal(0o600);
      for (const path of Object.keys(await stampTree(lab.backupsDir('node-01')))) {
        expect((await stat(`${lab.backupsDir('node-01')}/${path}`)).mode & 0o777, path).to.equal(
          0o600,
        );
      }
    });

    it('a hand edit overwritten with --force and put back from its backup is diverged, never stale: backups are no known versions', async () => {
      // The field report counted backups as published; fleet deliberately no longer does
      // (docs/classification.md): this backup holds the hand edit --force replaced above.
      const [backup] = Object.keys(await stampTree(lab.backupsDir('node-01')));
      const bytes = await readFile(`${lab.backupsDir('node-01')}/${backup as string}`);
      const current = await lab.readNode('node-01', POLICY);
      await lab.writeNode('node-01', POLICY, bytes);
      try {
        const run = await lab.run([
          'drift',
          '--host',
          'node-01',
          '--domain',
          'harness-policy',
          '--json',
        ]);
        expect(run.exitCode).to.equal(1);
        const item = driftReportSchema
          .parse(json(run))
          .hosts[0]?.items.find((i) => i.path === POLICY);
        expect(item?.state).to.equal('diverged');
        expect(item?.lines?.map((l) => l.text)).to.deep.equal([
          '- keep the build green on Fridays',
        ]);
        const install = await lab.run([
          'config',
          'install',
          'node-01',
          'harness-policy',
          '--file',
          POLICY,
          '--confirm',
          '--json',
        ]);
        expect(install.exitCode).to.equal(7);
        expect(json<{ error: { code: string } }>(install).error.code).to.equal('DIVERGED');
        expect(await lab.readNode('node-01', POLICY)).to.deep.equal(bytes);
      } finally {
        await lab.writeNode('node-01', POLICY, current);
      }
    });
  });

  describe('compare-and-swap (node-02)', () => {
    it('a file changed between plan and install: the node answers PRECONDITION_FAILED (exit 3), nothing written', async () => {
      const older = lab.versionsOf(POLICY_CANONICAL)[1] as string;
      await lab.writeNode('node-02', POLICY, lab.renderAt(older, POLICY_CANONICAL, 'node-02'));
      const plan = await planOf('node-02', 'harness-policy');
      const planned = plan.files.find((f) => f.path === POLICY);
      expect(planned?.item.state).to.equal('stale');
      expect(planned?.liveSha256).to.equal(sha256(await lab.readNode('node-02', POLICY)));

      // Someone at node-02 edits the file after the plan was made.
      const edited = `${(await lab.readNode('node-02', POLICY)).toString('utf8')}- edited after the plan\n`;
      await lab.writeNode('node-02', POLICY, edited);
      const inode = (await stat(lab.nodePath('node-02', POLICY))).ino;

      const client = lab.client('node-02');
      const request = {
        operationId: newOperationId(),
        domain: 'harness-policy',
        files: [
          {
            fileId: planned?.fileId as string,
            path: POLICY,
            expectedSha256: planned?.liveSha256 as string,
            content: planned?.desired as string,
          },
        ],
        parameters: {},
      };
      const error = await client.install(request).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, 'the install must be refused').to.be.instanceOf(ControllerError);
      expect(error).to.include({ code: 'PRECONDITION_FAILED', exitCode: 3, host: 'node-02' });
      expect(await readFile(lab.nodePath('node-02', POLICY), 'utf8')).to.equal(edited);
      expect((await stat(lab.nodePath('node-02', POLICY))).ino).to.equal(inode);
      expect(await stampTree(lab.backupsDir('node-02'))).to.deep.equal({});

      // Planned against what is live now, the same content goes through, backing up the edit.
      const receipt = await client.install({
        ...request,
        operationId: newOperationId(),
        files: [{ ...request.files[0]!, expectedSha256: sha256(edited) }],
      });
      expect(receipt).to.include({ outcome: 'installed', verified: true });
      expect(await readFile(lab.nodePath('node-02', POLICY), 'utf8')).to.equal(planned?.desired);
      const backupPath = receipt.files[0]?.backupPath as string;
      expect(await readFile(lab.nodePath('node-02', backupPath), 'utf8')).to.equal(edited);
    });
  });

  describe('two concurrent installs of one domain (node-03)', () => {
    it('leave the file wholly one version, one install written, the old bytes backed up', async () => {
      const oldest = lab.versionsOf(POLICY_CANONICAL).at(-1) as string;
      const stale = lab.renderAt(oldest, POLICY_CANONICAL, 'node-03');
      await lab.writeNode('node-03', POLICY, stale);
      const desired = lab.renderAt('HEAD', POLICY_CANONICAL, 'node-03');
      const args = ['config', 'install', 'node-03', 'harness-policy', '--confirm', '--json'];
      const runs = await Promise.all([lab.run(args), lab.run(args)]);

      const receipts: Receipt[] = [];
      for (const run of runs) {
        expect([0, 3], run.stdout + run.stderr).to.include(run.exitCode);
        if (run.exitCode === 0)
          receipts.push(receiptSchema.parse(json<{ receipt: unknown }>(run).receipt));
        else {
          expect(['PRECONDITION_FAILED', 'LOCKED']).to.include(
            json<{ error: { code: string } }>(run).error.code,
          );
        }
      }
      expect(receipts.length, 'at least one install succeeds').to.be.at.least(1);
      const written = receipts.filter((r) =>
        r.files.some((f) => f.path === POLICY && f.state === 'written'),
      );
      expect(written, 'exactly one install wrote CLAUDE.md').to.have.length(1);
      expect(await readFile(lab.nodePath('node-03', POLICY), 'utf8')).to.equal(desired);

      // Nothing lost: exactly one backup of CLAUDE.md, holding the stale bytes that were replaced.
      const backups = Object.entries(await stampTree(lab.backupsDir('node-03'))).filter(([path]) =>
        path.includes('CLAUDE.md'),
      );
      expect(backups).to.have.length(1);
      expect(backups[0]?.[1].sha256).to.equal(sha256(stale));
      expect(written[0]?.files.find((f) => f.path === POLICY)?.beforeSha256).to.equal(
        sha256(stale),
      );

      const drift = await lab.run([
        'drift',
        '--host',
        'node-03',
        '--domain',
        'harness-policy',
        '--json',
      ]);
      expect(drift.exitCode).to.equal(0);
      expect(driftReportSchema.parse(json(drift)).summary.current).to.equal(1);
    });
  });
  describe('inventory and export (contract §9)', () => {
    it('config inventory lists every managed file with its sha256, and the backups', async () => {
      const run = await lab.run(['config', 'inventory', 'node-01', '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      const inventory = json<InventoryResponse>(run);
      expect(inventory.nodeId).to.equal('node-01');
      expect(inventory.truncated).to.equal(false);
      const files = inventory.files.filter((f) => f.kind === 'file');
      expect(files.map((f) => f.path).sort()).to.deep.equal(
        [POLICY, AGENTS, GEMINI, ROUTER, TRANSPORT].sort(),
      );
      for (const file of files) {
        if ([POLICY, AGENTS, GEMINI].includes(file.path)) {
          const bytes = await lab.readNode('node-01', file.path);
          expect(file, file.path).to.include({
            exists: true,
            size: bytes.length,
            sha256: sha256(bytes),
          });
          expect(file.format).to.equal('markdown');
          expect(Number.isNaN(Date.parse(file.mtime ?? ''))).to.equal(false);
        } else {
          expect(file.exists, file.path).to.equal(false);
        }
      }
      // The one backup node-01 holds: the diverged CLAUDE.md that --force replaced.
      expect(inventory.backups).to.have.length(1);
      const [backup] = inventory.backups;
      expect(backup).to.include({ domain: 'harness-policy', fileId: 'CLAUDE.md', of: POLICY });
      const bytes = await lab.readNode('node-01', backup?.path as string);
      expect(backup).to.include({ size: bytes.length, sha256: sha256(bytes) });
      expect(bytes.toString('utf8')).to.include('- keep the build green on Fridays');
    });

    it('config export returns the file (and a backup) with its sha256', async () => {
      const run = await lab.run(['config', 'export', 'node-01', POLICY, '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      const bytes = await lab.readNode('node-01', POLICY);
      const exported = json<ExportResponse>(run);
      expect(exported).to.include({
        exists: true,
        path: POLICY,
        domain: 'harness-policy',
        kind: 'file',
        content: bytes.toString('utf8'),
        sha256: sha256(bytes),
        redacted: false,
      });
      const plain = await lab.run(['config', 'export', 'node-01', POLICY]);
      expect(plain.exitCode).to.equal(0);
      expect(plain.stdout).to.equal(bytes.toString('utf8'));

      const inventory = json<InventoryResponse>(
        await lab.run(['config', 'inventory', 'node-01', '--json']),
      );
      const backupPath = inventory.backups[0]?.path as string;
      const backup = await lab.run(['config', 'export', 'node-01', backupPath, '--json']);
      expect(backup.exitCode, backup.stderr).to.equal(0);
      expect(json<ExportResponse>(backup)).to.include({
        kind: 'backup',
        content: (await lab.readNode('node-01', backupPath)).toString('utf8'),
      });
    });

    it('config export redacts secret values of the node env chain back to their names', async () => {
      const value = randomBytes(24).toString('hex');
      await lab.writeNode(
        'node-03',
        '~/.config/fleet/env',
        `# node-local secrets\nROUTER_TOKEN=${value}\n`,
      );
      const live = `${lab.renderAt('HEAD', ROUTER_CANONICAL, 'node-03')}auth: ${value}\n`;
      await lab.writeNode('node-03', ROUTER, live);
      const run = await lab.run(['config', 'export', 'node-03', ROUTER, '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      const exported = json<ExportResponse>(run);
      expect(exported).to.include({ exists: true, redacted: true, sha256: sha256(live) });
      expect(exported.exists && exported.content).to.equal(
        live.replace(value, '{{ secret.ROUTER_TOKEN }}'),
      );
      const plain = await lab.run(['config', 'export', 'node-03', ROUTER]);
      for (const output of [run.stdout, run.stderr, plain.stdout, plain.stderr]) {
        expect(output).not.to.include(value);
      }
    });

    it('config export of a path outside the allowlist is refused by policy: exit 7', async () => {
      await lab.writeNode('node-01', '~/.bashrc', 'export PATH=$HOME/bin:$PATH\n');
      const outcomes: string[] = [];
      const codes: string[] = [];
      const paths = ['~/.bashrc', '~/.config/fleet/env', '~/.local/state/fleet/tokens.json'];
      for (const path of paths) {
        const run = await lab.run(['config', 'export', 'node-01', path, '--json']);
        const error = json<{ error?: { code: string; exitCode: number } }>(run).error;
        outcomes.push(`${path}: exit ${run.exitCode}`);
        codes.push(`${path}: exit ${run.exitCode} ${error?.code ?? 'no error'}`);
      }
      expect(outcomes, codes.join('; ')).to.deep.equal(paths.map((path) => `${path}: exit 7`));
    });
  });
});
