/**
 * `fleet config adopt` and the canary secret end to end on a lab fleet (issue 4; contract §4, §8.5,
 * §15, principle 5).
 *
 * Adopt: the commit of `mirror/<host>/<domain>/<file>` with its four provenance trailers and the
 * host's variable values reverse-substituted; refusal when that path is dirty (exit 3, no commit);
 * a credential-looking line refused with exit 7 naming its line, never its value, and accepted
 * with --allow-secret-line.
 *
 * Canary: a random secret value in node-02's env chain, used by a canonical file through
 * `{{ secret.API_KEY }}`, installed on node-02. After drift (with reports), plan, adopt, inventory
 * and export, it must be found in node-02's live file, its env file and its backups of that file —
 * and nowhere else: not in any repo blob, report, receipt, CLI output, audit or operator log, nor
 * any other file the lab or the operator wrote. Every CLI run of this file is in that grep.
 *
 * One lab for the file: node-01 and node-03 for adopt, node-02 for the canary.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  driftReportSchema,
  receiptSchema,
  type DomainPlan,
  type ExportResponse,
  type InventoryResponse,
} from '@fleet/core';
import { json } from '../src/fleet.js';
import {
  Lab,
  POLICY,
  POLICY_CANONICAL,
  ROUTER,
  ROUTER_CANONICAL,
  ULID,
  filesContaining,
  sha256,
} from './lab-fixture.js';

interface AdoptResult {
  host: string;
  path: string;
  domain: string;
  mirrorPath: string;
  operationId: string;
  liveSha256: string;
  commit: string | null;
  substitutions: Record<string, number>;
}

/** The trailers of a commit, as git itself parses them. */
function trailers(lab: Lab, commit: string): Record<string, string> {
  const text = lab.git('log', '-1', '--format=%(trailers:only,unfold)', commit);
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes(': '))
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );
}

describe('e2e: config adopt and the canary secret on a lab fleet', function () {
  this.timeout(120_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-e2e-adopt-');
    await lab.up(3);
  });
  after(async () => {
    await lab?.destroy();
  });

  describe('adopt', () => {
    const mirror = 'mirror/node-01/router/router.yaml';
    let live: string;

    it('commits mirror/<host>/<domain>/<file> with the four trailers, host values reverse-substituted', async () => {
      live = `${lab.renderAt('HEAD', ROUTER_CANONICAL, 'node-01')}# hot fix on node-01: keep node-01 on the fast path\n`;
      await lab.writeNode('node-01', ROUTER, live);
      const head = lab.git('rev-parse', 'HEAD').trim();
      const run = await lab.run(['config', 'adopt', 'node-01', ROUTER, '--json']);
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
      const result = json<AdoptResult>(run);
      expect(result).to.include({
        host: 'node-01',
        path: ROUTER,
        domain: 'router',
        mirrorPath: mirror,
        liveSha256: sha256(live),
      });
      expect(result.operationId).to.match(ULID);
      expect(result.substitutions).to.deep.equal({ node_id: 3 });
      expect(result.commit).to.equal(lab.git('rev-parse', 'HEAD').trim());
      expect(lab.git('rev-parse', `${result.commit as string}^`).trim()).to.equal(head);
      expect(lab.git('show', '--name-only', '--format=', 'HEAD').trim()).to.equal(mirror);
      expect(lab.git('status', '--porcelain')).to.equal('');

      const committed = lab.git('show', `HEAD:${mirror}`);
      expect(committed).to.equal(live.replace(/node-01/g, '{{ host.node_id }}'));
      expect(committed).not.to.include('node-01');

      const identity = await lab.client('node-01').identity();
      const message = lab.git('log', '-1', '--format=%B');
      expect(message).to.include(`Fleet-Adopted-From: node-01:${ROUTER}\n`);
      expect(message).to.include(`Fleet-Live-Sha256: ${sha256(live)}\n`);
      expect(message).to.include(`Fleet-Operation: ${result.operationId}\n`);
      const parsed = trailers(lab, 'HEAD');
      expect(Object.keys(parsed).sort()).to.deep.equal([
        'Fleet-Adopted-From',
        'Fleet-Controller',
        'Fleet-Live-Sha256',
        'Fleet-Operation',
      ]);
      expect(parsed).to.include({
        'Fleet-Adopted-From': `node-01:${ROUTER}`,
        'Fleet-Live-Sha256': sha256(live),
        'Fleet-Operation': result.operationId,
      });
      // The controller's build identity: package@version, then the build (`+<sha256|dev>`).
      expect(
        parsed['Fleet-Controller']?.startsWith(`${identity.package}@${identity.version}`),
      ).to.equal(true);
      // The node's audit log and the operator's log share the operation id.
      expect(await readFile(lab.auditLog('node-01'), 'utf8')).to.include(result.operationId);
      expect(await readFile(lab.operatorLog, 'utf8')).to.include(result.operationId);
    });

    it('refuses when the mirror path is dirty in the repo (exit 3, no commit), worktree or index', async () => {
      await lab.writeNode('node-01', ROUTER, `${live}# a second hot fix\n`);
      const file = join(lab.repo, ...mirror.split('/'));
      const dirty = `${lab.git('show', `HEAD:${mirror}`)}# an operator's uncommitted review note\n`;
      await writeFile(file, dirty);
      const head = lab.git('rev-parse', 'HEAD');
      for (const stage of [false, true]) {
        if (stage) lab.git('add', '--', mirror);
        const run = await lab.run(['config', 'adopt', 'node-01', ROUTER, '--json']);
        expect(run.exitCode, `staged: ${stage}`).to.equal(3);
        expect(json<{ error: { code: string } }>(run).error.code).to.equal('REPO_DIRTY');
        expect(lab.git('rev-parse', 'HEAD')).to.equal(head);
        expect(await readFile(file, 'utf8')).to.equal(dirty);
      }
      // Clean again: adopt goes through and commits the second hot fix.
      lab.git('reset', '-q', '--', mirror);
      await writeFile(file, lab.git('show', `HEAD:${mirror}`));
      expect(lab.git('status', '--porcelain')).to.equal('');
      const run = await lab.run(['config', 'adopt', 'node-01', ROUTER, '--json']);
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(lab.git('show', `HEAD:${mirror}`)).to.include('# a second hot fix');
      // Adopting the same capture again changes nothing.
      const again = await lab.run(['config', 'adopt', 'node-01', ROUTER, '--json']);
      expect(again.exitCode, again.stderr).to.equal(0);
      expect(json<AdoptResult>(again).commit).to.equal(null);
    });

    it('refuses a credential-looking line with exit 7, naming the line and never the value', async () => {
      const token = `ghp_${randomBytes(64)
        .toString('base64')
        .replace(/[^A-Za-z0-9]/g, '')
        .slice(0, 36)}`;
      expect(token).to.match(/^ghp_[A-Za-z0-9]{36}$/);
      const body = lab.renderAt('HEAD', ROUTER_CANONICAL, 'node-03');
      const line = body.split('\n').length; // the appended line's number
      const livePath = ROUTER;
      await lab.writeNode('node-03', livePath, `${body}github_token: ${token}\n`);
      const head = lab.git('rev-parse', 'HEAD');

      const refused = await lab.run(['config', 'adopt', 'node-03', livePath, '--json']);
      const human = await lab.run(['config', 'adopt', 'node-03', livePath]);
      const wrongLine = await lab.run([
        'config',
        'adopt',
        'node-03',
        livePath,
        '--allow-secret-line',
        String(line - 1),
        '--json',
      ]);
      for (const run of [refused, human, wrongLine]) {
        expect(run.exitCode, run.stdout + run.stderr).to.equal(7);
        expect(run.stdout + run.stderr).not.to.include(token);
        expect(run.stdout + run.stderr).not.to.include(token.slice(4, 20));
      }
      const { error } = json<{ error: { code: string; message: string } }>(refused);
      expect(error.code).to.equal('SECRET_FOUND');
      expect(error.message).to.match(new RegExp(`line ${line}\\b`));
      expect(human.stderr).to.match(new RegExp(`line ${line}\\b`));
      expect(lab.git('rev-parse', 'HEAD')).to.equal(head);
      expect(lab.git('ls-tree', '-r', '--name-only', 'HEAD', 'mirror/node-03')).to.equal('');
      expect(await readFile(lab.operatorLog, 'utf8')).not.to.include(token);
      expect(await readFile(lab.auditLog('node-03'), 'utf8')).not.to.include(token);

      const allowed = await lab.run([
        'config',
        'adopt',
        'node-03',
        livePath,
        '--allow-secret-line',
        String(line),
        '--json',
      ]);
      expect(allowed.exitCode, allowed.stdout + allowed.stderr).to.equal(0);
      const result = json<AdoptResult>(allowed);
      expect(result.mirrorPath).to.equal('mirror/node-03/router/router.yaml');
      expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(result.commit);
      expect(lab.git('show', `HEAD:${result.mirrorPath}`).split('\n')[line - 1]).to.equal(
        `github_token: ${token}`,
      );
    });
  });

  describe('the canary secret (node-02)', () => {
    const canary = randomBytes(32).toString('hex');
    /** SERVICE_TOKEN's value, removed from the chain later; API_KEY's after its rotation. */
    const serviceToken = randomBytes(32).toString('hex');
    const rotated = randomBytes(32).toString('hex');
    const SECRET_LINE =
      'Service calls authenticate with {{ secret.API_KEY }} (a node-local value).';
    const TOKEN_LINE = 'The deploy hook presents {{ secret.SERVICE_TOKEN }}.';
    const reports = () => join(lab.tmp, 'reports', 'drift', 'canary');

    it('is installed into the live file from the node env chain', async () => {
      await lab.writeNode(
        'node-02',
        '~/.config/fleet/env',
        `# node-02 secrets\nAPI_KEY=${canary}\n`,
      );
      // Outside the policy block, so only the whole file CLAUDE.md carries it.
      await lab.commitEdit(
        POLICY_CANONICAL,
        (text) =>
          text.replace(
            '<!-- fleet:harness-policy:begin -->',
            `${SECRET_LINE}\n\n<!-- fleet:harness-policy:begin -->`,
          ),
        'policy: services authenticate with the node API key',
      );
      const install = await lab.run([
        'config',
        'install',
        'node-02',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(install.exitCode, install.stdout + install.stderr).to.equal(0);
      receiptSchema.parse(json<{ receipt: unknown }>(install).receipt);
      const live = (await lab.readNode('node-02', POLICY)).toString('utf8');
      expect(live).to.include(SECRET_LINE.replace('{{ secret.API_KEY }}', canary));
      expect(live).not.to.include('{{ secret.API_KEY }}');

      // A later canonical change, installed: the replaced live file (with the value) is backed up.
      await lab.commitEdit(
        POLICY_CANONICAL,
        (text) => text.replace('(a node-local value)', '(a node-local value, rotated monthly)'),
        'policy: say how often the key rotates',
      );
      const drift = await lab.run([
        'drift',
        '--host',
        'node-02',
        '--domain',
        'harness-policy',
        '--json',
      ]);
      const item = driftReportSchema
        .parse(json(drift))
        .hosts[0]?.items.find((i) => i.path === POLICY);
      expect(item?.state, 'compared in template space: the previous version, stale').to.equal(
        'stale',
      );
      const again = await lab.run([
        'config',
        'install',
        'node-02',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(again.exitCode, again.stdout + again.stderr).to.equal(0);
      const receipt = receiptSchema.parse(json<{ receipt: unknown }>(again).receipt);
      const backup = receipt.files.find((f) => f.path === POLICY)?.backupPath;
      expect(backup).to.be.a('string');
      expect(await readFile(lab.nodePath('node-02', backup as string), 'utf8')).to.include(canary);
      expect(receipt.files.find((f) => f.path === POLICY)?.diff).to.include('{{ secret.API_KEY }}');
    });

    it('drift (with reports), plan, adopt, inventory and export all work in template space', async () => {
      const drift = await lab.run(['drift', '--report-dir', reports(), '--json']);
      expect(drift.exitCode).to.equal(1);
      const report = driftReportSchema.parse(json(drift));
      const node02 = report.hosts.find((h) => h.host === 'node-02');
      expect(node02?.items.find((i) => i.path === POLICY)?.state).to.equal('current');
      await lab.run(['drift', '--host', 'node-02']);

      const plan = await lab.run(['config', 'plan', 'node-02', 'harness-policy', '--json']);
      expect(plan.exitCode, plan.stderr).to.equal(0);
      const file = json<{ plans: DomainPlan[] }>(plan).plans[0]?.files.find(
        (f) => f.path === POLICY,
      );
      expect(file?.liveSha256).to.equal(sha256(await lab.readNode('node-02', POLICY)));
      expect(file?.desired).to.include('{{ secret.API_KEY }}');
      await lab.run(['config', 'plan', 'node-02']);

      const adopt = await lab.run(['config', 'adopt', 'node-02', POLICY, '--json']);
      expect(adopt.exitCode, adopt.stdout + adopt.stderr).to.equal(0);
      const mirror = json<AdoptResult>(adopt).mirrorPath;
      expect(mirror).to.equal('mirror/node-02/harness-policy/CLAUDE.md');
      expect(lab.git('show', `HEAD:${mirror}`)).to.include(
        SECRET_LINE.replace('(a node-local value)', '(a node-local value, rotated monthly)'),
      );
      expect(trailers(lab, 'HEAD')['Fleet-Live-Sha256']).to.equal(
        sha256(await lab.readNode('node-02', POLICY)),
      );

      const inventory = await lab.run(['config', 'inventory', 'node-02', '--json']);
      expect(inventory.exitCode, inventory.stderr).to.equal(0);
      const backups = json<InventoryResponse>(inventory).backups;
      expect(backups.map((b) => b.of)).to.include(POLICY);
      await lab.run(['config', 'inventory', 'node-02']);

      const exported = await lab.run(['config', 'export', 'node-02', POLICY, '--json']);
      expect(exported.exitCode, exported.stderr).to.equal(0);
      expect(json<ExportResponse>(exported)).to.include({ redacted: true });
      await lab.run(['config', 'export', 'node-02', POLICY]);
      for (const backup of backups) {
        const run = await lab.run(['config', 'export', 'node-02', backup.path, '--json']);
        expect(run.exitCode, run.stderr).to.equal(0);
        expect(json<ExportResponse>(run)).to.include({ redacted: true });
        await lab.run(['config', 'export', 'node-02', backup.path]);
      }
      // Asking for the env file itself is refused, and the refusal carries no value either.
      const envFile = await lab.run([
        'config',
        'export',
        'node-02',
        '~/.config/fleet/env',
        '--json',
      ]);
      expect(envFile.exitCode).to.not.equal(0);
      // A diverged copy with the value in it: the drift lines and plan diff are redacted too.
      const live = (await lab.readNode('node-02', POLICY)).toString('utf8');
      await lab.writeNode('node-02', POLICY, `${live}- local note: key ${canary} works\n`);
      const diverged = await lab.run(['drift', '--host', 'node-02', '--json']);
      const local = driftReportSchema
        .parse(json(diverged))
        .hosts[0]?.items.find((i) => i.path === POLICY);
      expect(local?.state).to.equal('diverged');
      expect(local?.lines?.[0]?.text).to.equal('- local note: key {{ secret.API_KEY }} works');
      await lab.run(['config', 'plan', 'node-02', 'harness-policy', '--json']);
      const refused = await lab.run([
        'config',
        'install',
        'node-02',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(refused.exitCode).to.equal(7);
      await lab.run(['drift', '--report-dir', reports()]);
      await lab.writeNode('node-02', POLICY, live);
    });

    it('after a rotation (API_KEY) and a removal (SERVICE_TOKEN): every output shows names, never the old values', async () => {
      // A second secret in the file, installed; then the chain rotates one and drops the other.
      await lab.writeNode(
        'node-02',
        '~/.config/fleet/env',
        `API_KEY=${canary}\nSERVICE_TOKEN=${serviceToken}\n`,
      );
      await lab.commitEdit(
        POLICY_CANONICAL,
        (text) =>
          text.replace(
            '<!-- fleet:harness-policy:begin -->',
            `${TOKEN_LINE}\n\n<!-- fleet:harness-policy:begin -->`,
          ),
        'policy: the service token, too',
      );
      const first = await lab.run([
        'config',
        'install',
        'node-02',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(first.exitCode, first.stdout + first.stderr).to.equal(0);
      expect((await lab.readNode('node-02', POLICY)).toString('utf8')).to.include(serviceToken);
      await lab.writeNode('node-02', '~/.config/fleet/env', `# rotated\nAPI_KEY=${rotated}\n`);

      // The live file still holds the old values: drift, reports, plan, export and adopt see names.
      const drift = await lab.run([
        'drift',
        '--host',
        'node-02',
        '--report-dir',
        reports(),
        '--json',
      ]);
      const item = driftReportSchema
        .parse(json(drift))
        .hosts[0]?.items.find((i) => i.path === POLICY);
      // The node names the rotated secret (never a value): the host is stale until installed.
      expect(item?.state, 'a rotation that has not reached the host shows').to.equal('stale');
      expect(item?.rotatedSecrets).to.deep.equal(['API_KEY']);
      expect(item?.detail).to.contain('secret API_KEY rotated');
      await lab.run(['drift', '--report-dir', reports()]);
      const plan = await lab.run(['config', 'plan', 'node-02', 'harness-policy', '--json']);
      expect(plan.exitCode, plan.stderr).to.equal(0);
      await lab.run(['config', 'plan', 'node-02', 'harness-policy']);
      const exported = await lab.run(['config', 'export', 'node-02', POLICY, '--json']);
      const content = json<ExportResponse>(exported);
      expect(content.exists && content.content)
        .to.include('{{ secret.API_KEY }}')
        .and.include(TOKEN_LINE);
      await lab.run(['config', 'export', 'node-02', POLICY]);
      const adopt = await lab.run(['config', 'adopt', 'node-02', POLICY, '--json']);
      expect(adopt.exitCode, adopt.stdout + adopt.stderr).to.equal(0);
      expect(lab.git('show', `HEAD:${json<AdoptResult>(adopt).mirrorPath}`)).to.include(TOKEN_LINE);

      // An install needing the removed secret is refused by name; without it, it goes through.
      const missing = await lab.run([
        'config',
        'install',
        'node-02',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(missing.exitCode).to.equal(2);
      expect(missing.stdout + missing.stderr).to.include('SERVICE_TOKEN');
      await lab.commitEdit(
        POLICY_CANONICAL,
        (text) => text.replace(`${TOKEN_LINE}\n\n`, ''),
        'policy: the service token is gone',
      );
      const last = await lab.run([
        'config',
        'install',
        'node-02',
        'harness-policy',
        '--confirm',
        '--json',
      ]);
      expect(last.exitCode, last.stdout + last.stderr).to.equal(0);
      const receipt = receiptSchema.parse(json<{ receipt: unknown }>(last).receipt);
      expect(receipt.files.find((f) => f.path === POLICY)?.diff).to.include(`-${TOKEN_LINE}`);
      const live = (await lab.readNode('node-02', POLICY)).toString('utf8');
      expect(live).to.include(rotated).and.not.include(canary);
      for (const backup of json<InventoryResponse>(
        await lab.run(['config', 'inventory', 'node-02', '--json']),
      ).backups) {
        await lab.run(['config', 'export', 'node-02', backup.path, '--json']);
      }
      await lab.run(['drift', '--host', 'node-02', '--report-dir', reports(), '--json']);
    });

    it('appears only in the live file, the node env file, the backups of the live file and the node secret memory (rotated and removed values too)', async () => {
      const allowed = new Set([
        lab.nodePath('node-02', POLICY),
        lab.nodePath('node-02', '~/.config/fleet/env'),
        // The values the node resolved, remembered for redaction, 0600 beside the backups.
        lab.nodePath('node-02', '~/.local/state/fleet/secret-memory.json'),
      ]);
      // Backups are named by the file id's stem and a hash of it (contract §8.4).
      const backupPrefix = join(lab.backupsDir('node-02'), 'harness-policy', 'CLAUDE.md-');
      // Positive control: the grep finds each value where it must be.
      expect(await filesContaining(lab.tmp, rotated)).to.include(lab.nodePath('node-02', POLICY));
      for (const value of [canary, serviceToken]) {
        const everywhere = await filesContaining(lab.tmp, value);
        expect(everywhere.some((path) => path.startsWith(backupPrefix))).to.equal(true);
        expect(everywhere).to.include(
          lab.nodePath('node-02', '~/.local/state/fleet/secret-memory.json'),
        );
      }
      for (const value of [canary, serviceToken, rotated]) {
        // Every file this lab, its nodes, the reports and the operator's state hold.
        const leaks = (await filesContaining(lab.tmp, value)).filter(
          (path) => !allowed.has(path) && !path.startsWith(backupPrefix),
        );
        expect(leaks, 'files holding a secret value').to.deep.equal([]);
      }
      for (const value of [canary, serviceToken, rotated]) {
        // Every object in the repository (reachable or not), and every patch of its history.
        const objects = execFileSync(
          'git',
          ['-C', lab.repo, 'cat-file', '--batch-all-objects', '--batch'],
          {
            maxBuffer: 256 * 1024 * 1024,
          },
        );
        expect(objects.includes(value), 'a repository object').to.equal(false);
        const history = lab.git('log', '-p', '--all', '--full-history');
        expect(history).to.include('{{ secret.API_KEY }}');
        expect(history.includes(value), 'git log -p --all').to.equal(false);

        // The reports, the logs, every CLI output of this file.
        const reportNames = await readdir(reports());
        const reportFiles = reportNames.map((name) => join(reports(), name));
        expect(reportNames).to.include.members([
          'drift.json',
          'drift.md',
          'drift.html',
          'drift-2.json',
        ]);
        for (const path of [...reportFiles, lab.auditLog('node-02'), lab.operatorLog]) {
          expect((await readFile(path, 'utf8')).includes(value), path).to.equal(false);
        }
        expect(lab.runs.length).to.be.at.least(15);
        for (const run of lab.runs) {
          expect(run.stdout.includes(value), `stdout of fleet ${run.args.join(' ')}`).to.equal(
            false,
          );
          expect(run.stderr.includes(value), `stderr of fleet ${run.args.join(' ')}`).to.equal(
            false,
          );
        }
      }
    });
  });
});
