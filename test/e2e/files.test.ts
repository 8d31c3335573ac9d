/**
 * The files domain end to end on a lab fleet (contract §10.4), the README's dotfile walkthrough:
 * one entry in `domains/files/files.yaml`, commit, plan, install, drift clean, a local edit shown
 * as diverged — through the real binary and real controllers. Also: a `~/.gitconfig` block that
 * keeps the user's own lines, a path another domain owns refused by `fleet validate`
 * (FILES_PATH_OWNED), and a path outside the node's policy patterns refused by the node
 * (POLICY_REFUSED) with nothing written.
 */
import { expect } from 'chai';
import { access, chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeNodePolicy } from '@fleet/controller';
import {
  driftReportSchema,
  parseNodePolicy,
  receiptSchema,
  type DriftReport,
  type Receipt,
} from '@fleet/core';
import { json } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

const HELLO = '~/.config/fleet-demo/hello.conf';
const GITCONFIG = '~/.gitconfig';
const MANIFEST = 'domains/files/files.yaml';

describe('e2e: the files domain manages a dotfile on a lab fleet', function () {
  this.timeout(240_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-e2e-files-');
    await lab.up(1);
  });
  after(async () => {
    await lab?.destroy();
  });

  const write = async (path: string, text: string): Promise<void> => {
    const file = join(lab.repo, ...path.split('/'));
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, text);
  };
  const commit = (message: string): void => {
    lab.git('add', '--all');
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-qm',
      message,
    );
  };
  const drift = async (): Promise<{ exitCode: number; report: DriftReport }> => {
    const run = await lab.run(['drift', '--host', 'node-01', '--domain', 'files', '--json']);
    expect([0, 1], run.stdout + run.stderr).to.include(run.exitCode);
    return { exitCode: run.exitCode, report: driftReportSchema.parse(json(run)) };
  };
  const stateOf = (report: DriftReport, path: string): string | undefined =>
    report.hosts[0]?.items.find((item) => item.path === path)?.state;
  const install = () => lab.run(['config', 'install', 'node-01', 'files', '--confirm', '--json']);

  it('the lab repository has the example entry, and the node does not have the file yet', async () => {
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    expect(manifest).to.contain(`path: ${HELLO}`);
    const { exitCode, report } = await drift();
    expect(exitCode).to.equal(1);
    expect(stateOf(report, HELLO)).to.equal('missing');
  });

  it('plan, install, then drift is clean and the node holds the source', async () => {
    const plan = await lab.run(['config', 'plan', 'node-01', 'files', '--json']);
    expect(plan.exitCode, plan.stderr).to.be.oneOf([0, 1]);
    expect(plan.stdout).to.contain(HELLO);
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    const source = await readFile(join(lab.repo, 'domains', 'files', 'hello.conf'), 'utf8');
    expect((await lab.readNode('node-01', HELLO)).toString('utf8')).to.equal(source);
    const { exitCode, report } = await drift();
    expect(exitCode, JSON.stringify(report)).to.equal(0);
    expect(stateOf(report, HELLO)).to.equal('current');
  });

  it('a local edit on the node is shown as diverged, and install refuses to overwrite it', async () => {
    const live = (await lab.readNode('node-01', HELLO)).toString('utf8');
    await lab.writeNode('node-01', HELLO, `${live}local = edited by hand\n`);
    const { exitCode, report } = await drift();
    expect(exitCode).to.equal(1);
    expect(stateOf(report, HELLO)).to.equal('diverged');
    const run = await install();
    expect(run.exitCode).to.equal(7);
    expect(json<{ error: { code: string } }>(run).error.code).to.equal('DIVERGED');
    expect((await lab.readNode('node-01', HELLO)).toString('utf8')).to.contain('edited by hand');
  });

  it("a block entry in ~/.gitconfig keeps the user's own lines byte for byte", async () => {
    const userText = '[core]\r\n\teditor = vim\r\n';
    await lab.writeNode('node-01', GITCONFIG, userText);
    await lab.writeNode(
      'node-01',
      HELLO,
      await readFile(join(lab.repo, 'domains', 'files', 'hello.conf')),
    );
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(
      MANIFEST,
      `${manifest}  - path: ${GITCONFIG}\n    source: gitconfig\n    kind: block\n    marker: '# {mark} fleet'\n`,
    );
    await write('domains/files/gitconfig', '[pull]\n\trebase = true\n');
    commit('files: manage a block of ~/.gitconfig');
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect((await lab.readNode('node-01', GITCONFIG)).toString('utf8')).to.equal(
      `${userText}\r\n# BEGIN fleet\r\n[pull]\r\n\trebase = true\r\n# END fleet\r\n`,
    );
    const { exitCode, report } = await drift();
    expect(exitCode, JSON.stringify(report)).to.equal(0);
    expect(stateOf(report, GITCONFIG)).to.equal('current');
  });

  it('validate refuses an entry whose path another domain owns (FILES_PATH_OWNED)', async () => {
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(MANIFEST, `${manifest}  - path: ~/.claude/CLAUDE.md\n    source: hello.conf\n`);
    try {
      const run = await lab.run(['validate', '--json']);
      expect(run.exitCode).to.equal(2);
      expect(run.stdout + run.stderr).to.contain(
        '~/.claude/CLAUDE.md is a path of domain harness-policy',
      );
    } finally {
      await write(MANIFEST, manifest);
    }
  });

  const modeOf = async (path: string): Promise<string> =>
    ((await stat(lab.nodePath('node-01', path))).mode & 0o7777).toString(8).padStart(4, '0');
  const receiptOf = (run: { stdout: string }): Receipt | undefined => {
    const body = JSON.parse(run.stdout || '{}') as { receipt?: unknown };
    return body.receipt === undefined ? undefined : receiptSchema.parse(body.receipt);
  };

  it("chezmoi's last-written state: a mode narrowed by hand (0644 → 0600) is modified, refused without --force; --force puts it back", async () => {
    expect(await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8')).to.contain(
      'mode: "0644"',
    );
    expect(await modeOf(HELLO)).to.equal('0644');
    await chmod(lab.nodePath('node-01', HELLO), 0o600);
    const { exitCode, report } = await drift();
    expect(exitCode).to.equal(1);
    const item = report.hosts[0]?.items.find((i) => i.path === HELLO);
    expect(item?.state).to.equal('modified');
    expect(item?.mode).to.deep.equal({ live: '0600', wanted: '0644', written: '0644' });
    expect(item?.detail).to.contain('mode 0600, narrowed by hand since fleet wrote it 0644');
    const plan = await lab.run(['config', 'plan', 'node-01', 'files']);
    expect(plan.stdout + plan.stderr).to.contain('narrowed by hand');
    // adopt takes content only, and says so: the mode is the entry's.
    const adopted = await lab.run(['config', 'adopt', 'node-01', HELLO]);
    expect(adopted.exitCode, adopted.stdout + adopted.stderr).to.equal(0);
    expect(adopted.stderr).to.contain(
      `adopt takes content only: ${HELLO} keeps the mode 0644 its files.yaml entry says, not its live 0600`,
    );
    const refused = await install();
    expect(refused.exitCode, refused.stdout + refused.stderr).to.equal(7);
    expect(json<{ error: { code: string; message: string } }>(refused).error).to.deep.include({
      code: 'MODIFIED',
    });
    expect(refused.stdout).to.contain('has its mode changed by hand (0600; fleet wrote 0644)');
    expect(await modeOf(HELLO)).to.equal('0600');
    const run = await lab.run([
      'config',
      'install',
      'node-01',
      'files',
      '--confirm',
      '--force',
      '--json',
    ]);
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    const file = receiptOf(run)?.files.find((f) => f.path === HELLO);
    expect(file).to.deep.include({ state: 'written', mode: { before: '0600', after: '0644' } });
    expect(await modeOf(HELLO)).to.equal('0644');
    const audit = (await readFile(lab.auditLog('node-01'), 'utf8')).trim().split('\n');
    const last = JSON.parse(audit[audit.length - 1] ?? '{}') as { files?: { mode?: unknown }[] };
    expect(last.files?.[0]?.mode).to.deep.equal({ before: '0600', after: '0644' });
    expect(stateOf((await drift()).report, HELLO)).to.equal('current');
    // The mode is the entry's again: adopt has no mode to note (issue 35).
    const again = await lab.run(['config', 'adopt', 'node-01', HELLO]);
    expect(again.exitCode, again.stdout + again.stderr).to.equal(0);
    expect(again.stderr).to.not.contain('adopt takes content only');
  });

  it('a mode widened by hand (0644 → 0664) is modified too; a mode the repository changes is stale and installed', async () => {
    await chmod(lab.nodePath('node-01', HELLO), 0o664);
    expect(stateOf((await drift()).report, HELLO)).to.equal('modified');
    expect((await install()).exitCode).to.equal(7);
    await chmod(lab.nodePath('node-01', HELLO), 0o644);
    expect(stateOf((await drift()).report, HELLO)).to.equal('current');
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(MANIFEST, manifest.replace('mode: "0644"', 'mode: "0600"'));
    commit('files: hello.conf is private');
    try {
      const { report } = await drift();
      const item = report.hosts[0]?.items.find((i) => i.path === HELLO);
      expect(item?.state).to.equal('stale');
      expect(item?.detail).to.contain(
        'mode 0644 is the one fleet wrote; the repository now says 0600',
      );
      const run = await install();
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
      expect(await modeOf(HELLO)).to.equal('0600');
    } finally {
      await write(MANIFEST, manifest);
      commit('files: hello.conf back to 0644');
      expect((await install()).exitCode).to.equal(0);
    }
    expect(await modeOf(HELLO)).to.equal('0644');
  });

  // An entry's coupled action: an id of the node's own policy (contract §10.4, §5.1).
  let manifest = '';
  const log = (): string => lab.nodePath('node-01', '~/demo-reload.log');
  /** Rewrites node-01's policy so the files domain has the action `demo-reload` running `script`. */
  const policyWith = async (exitCode: number): Promise<void> => {
    const script = lab.nodePath('node-01', `~/bin/demo-reload-${exitCode}.sh`);
    await mkdir(join(script, '..'), { recursive: true });
    await writeFile(script, `#!/bin/sh\necho ran >> '${log()}'\nexit ${exitCode}\n`, {
      mode: 0o700,
    });
    const file = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(file, 'utf8'), file);
    const files = policy.domains['files'];
    await writeNodePolicy(
      lab.home('node-01'),
      {
        ...policy,
        domains: {
          ...policy.domains,
          files: {
            ...files,
            actions: { 'demo-reload': { argv: [script], timeoutSeconds: 10, output: 'discard' } },
          },
        },
      },
      { force: true },
    );
  };
  const runs = async (): Promise<number> =>
    (await readFile(log(), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  /** The example entry with `action`, and a new source line: an install would change the file. */
  const entryWith = async (action: string, line: string): Promise<void> => {
    await write(
      MANIFEST,
      manifest.replace('    mode: "0644"\n', `    mode: "0644"\n    action: ${action}\n`),
    );
    const source = join(lab.repo, 'domains', 'files', 'hello.conf');
    await writeFile(source, `${await readFile(source, 'utf8')}${line}\n`);
    commit(`files: hello.conf runs ${action}`);
  };

  it("plan names an entry's action; install runs the node policy's script once after the change, not when unchanged", async () => {
    manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await policyWith(0);
    await entryWith('demo-reload', 'extra = 1');
    const plan = await lab.run(['config', 'plan', 'node-01', 'files', '--json']);
    const plans = JSON.parse(plan.stdout) as { plans: { actions: { kind: string }[] }[] };
    expect(plans.plans[0]?.actions.map((a) => a.kind)).to.deep.equal(['demo-reload']);
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    expect(receiptOf(run)?.actions).to.deep.include.members([
      {
        kind: 'demo-reload',
        status: 'ok',
        detail: `after ${HELLO}: action demo-reload (${lab.nodePath('node-01', '~/bin/demo-reload-0.sh')}) exited 0`,
      },
    ]);
    expect(await runs()).to.equal(1);
    const audit = (await readFile(lab.auditLog('node-01'), 'utf8')).trim().split('\n');
    const last = JSON.parse(audit[audit.length - 1] ?? '{}') as { actions?: unknown[] };
    expect(last.actions).to.deep.equal([
      {
        id: 'demo-reload',
        argv: [lab.nodePath('node-01', '~/bin/demo-reload-0.sh')],
        exitCode: 0,
        timedOut: false,
      },
    ]);
    const again = await install();
    expect(again.exitCode, again.stdout + again.stderr).to.equal(0);
    expect(await runs()).to.equal(1);
  });

  it("an entry's action that fails restores the file: exit 6, the receipt rolled back", async () => {
    const before = await lab.readNode('node-01', HELLO);
    await policyWith(1);
    await entryWith('demo-reload', 'extra = 2');
    const run = await install();
    expect(run.exitCode, run.stdout + run.stderr).to.equal(6);
    expect(receiptOf(run)).to.deep.include({ outcome: 'rolled-back' });
    expect(receiptOf(run)?.error?.code).to.equal('ACTION_FAILED');
    expect(await lab.readNode('node-01', HELLO)).to.deep.equal(before);
  });

  it("an entry's action id the node policy does not define: exit 7 (POLICY_REFUSED), nothing written", async () => {
    const before = await lab.readNode('node-01', HELLO);
    const logged = await runs();
    await entryWith('not-in-the-policy', 'extra = 3');
    try {
      const run = await install();
      expect(run.exitCode, run.stdout + run.stderr).to.equal(7);
      expect(run.stdout + run.stderr)
        .to.contain('POLICY_REFUSED')
        .and.contain('not-in-the-policy');
      expect(await lab.readNode('node-01', HELLO)).to.deep.equal(before);
      expect(await runs()).to.equal(logged);
    } finally {
      await write(MANIFEST, manifest);
      commit('files: no action');
    }
  });

  // A domain's validate role (fleet.yaml `domains.files.validate`, docs/plugin-authoring.md §7): the
  // node policy's real script checks the staged new content before it replaces the old.
  it('a validate action sees the staged new content before the rename; a refusal leaves the old file (exit 6)', async () => {
    const installed = await install();
    expect(installed.exitCode, installed.stdout + installed.stderr).to.equal(0);
    const seenLog = lab.nodePath('node-01', '~/demo-validate.log');
    const script = lab.nodePath('node-01', '~/bin/demo-validate.sh');
    await mkdir(join(script, '..'), { recursive: true });
    await writeFile(
      script,
      // It says why it refuses over several lines, as ssh -G or git config --list would.
      `#!/bin/sh\necho "$1" >> '${seenLog}'\nif grep -n REFUSE "$1" >&2; then\n  echo "demo-validate: REFUSE is not a setting" >&2\n  echo "demo-validate: 1 bad line" >&2\n  exit 3\nfi\n`,
      { mode: 0o700 },
    );
    const file = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(file, 'utf8'), file);
    await writeNodePolicy(
      lab.home('node-01'),
      {
        ...policy,
        domains: {
          ...policy.domains,
          files: {
            ...policy.domains['files'],
            // `~` is the node's home; `{file}` the staged file (docs/node-policy.md); what it
            // prints returns to the operator (`output: return`), redacted and bounded.
            actions: {
              'demo-validate': { argv: ['~/bin/demo-validate.sh', '{file}'], output: 'return' },
            },
          },
        },
      },
      { force: true },
    );
    const fleetYaml = await readFile(join(lab.repo, 'fleet.yaml'), 'utf8');
    expect(fleetYaml).to.contain('  files: { unattended: deny }');
    await write(
      'fleet.yaml',
      fleetYaml.replace(
        '  files: { unattended: deny }',
        '  files: { unattended: deny, validate: demo-validate }',
      ),
    );
    const source = join(lab.repo, 'domains', 'files', 'hello.conf');
    const good = await readFile(source, 'utf8');
    try {
      await writeFile(source, `${good}REFUSE = yes\n`);
      commit('files: a line the validate action refuses');
      const plan = await lab.run(['config', 'plan', 'node-01', 'files', '--json']);
      const plans = JSON.parse(plan.stdout) as { plans: { actions: { kind: string }[] }[] };
      expect(plans.plans[0]?.actions.map((a) => a.kind)).to.deep.equal(['validate']);
      const before = await lab.readNode('node-01', HELLO);
      const refused = await install();
      expect(refused.exitCode, refused.stdout + refused.stderr).to.equal(6);
      expect(refused.stdout).to.contain('ACTION_FAILED').and.contain('demo-validate');
      // The tool's own words (issue 40): the tail of its output, a field of --json's error.
      const why = [
        `${good.split('\n').length}:REFUSE = yes`,
        'demo-validate: REFUSE is not a setting',
        'demo-validate: 1 bad line',
      ];
      const refusal = JSON.parse(refused.stdout) as { error: { toolOutput?: string } };
      expect(refusal.error.toolOutput).to.equal(why.join('\n'));
      expect(await lab.readNode('node-01', HELLO)).to.deep.equal(before);
      const staged = (await readFile(seenLog, 'utf8')).trim().split('\n');
      expect(staged).to.have.length(1);
      // The staged file sat beside the live one, and is gone.
      expect(staged[0]).to.match(/\/\.config\/fleet-demo\/\.fleet-tmp-[0-9A-Z]{26}-\d+$/);
      const leftover = await access(staged[0] ?? '').then(
        () => true,
        () => false,
      );
      expect(leftover).to.equal(false);
      // Without --json: the one-line error on stderr, then the tool's lines under it; still exit 6.
      const shown = await lab.run(['config', 'install', 'node-01', 'files', '--confirm']);
      expect(shown.exitCode, shown.stdout + shown.stderr).to.equal(6);
      const lines = shown.stderr.split('\n');
      const at = lines.findIndex((line) => line.startsWith('Error: '));
      expect(lines[at]).to.contain('the validate action demo-validate refused the new');
      expect(lines.slice(at + 1, at + 4)).to.deep.equal(why.map((line) => `  | ${line}`));
      expect(await lab.readNode('node-01', HELLO)).to.deep.equal(before);

      await writeFile(source, `${good}accepted = yes\n`);
      commit('files: a line the validate action accepts');
      const run = await install();
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
      expect(receiptOf(run)?.actions.map((a) => `${a.kind} ${a.status}`)).to.deep.equal([
        'validate ok',
      ]);
      expect(Buffer.from((await lab.readNode('node-01', HELLO)) ?? []).toString()).to.contain(
        'accepted = yes',
      );
      const audit = (await readFile(lab.auditLog('node-01'), 'utf8')).trim().split('\n');
      const last = JSON.parse(audit[audit.length - 1] ?? '{}') as {
        actions?: { id: string; argv: string[] }[];
      };
      expect(last.actions?.[0]?.id).to.equal('demo-validate');
      expect(last.actions?.[0]?.argv[0]).to.equal(script);
    } finally {
      await write('fleet.yaml', fleetYaml);
      await writeFile(source, good);
      commit('files: no validate');
    }
  });

  it('a path outside the node policy patterns is refused by the node, nothing written', async () => {
    const manifest = await readFile(join(lab.repo, ...MANIFEST.split('/')), 'utf8');
    await write(MANIFEST, `${manifest}  - path: ~/.bashrc\n    source: hello.conf\n`);
    commit('files: an entry the node policy does not allow');
    const run = await install();
    // The node refused to even read it (the plan's snapshot), so the install is refused before
    // anything is sent, naming the node's reason.
    expect(run.exitCode, run.stdout + run.stderr).to.equal(7);
    expect(run.stdout + run.stderr).to.contain('no pattern of domains.files.patterns');
    // The top-level code says what happened (issue 38, 40): the node's policy refused the path.
    expect((JSON.parse(run.stdout) as { error: { code: string } }).error.code).to.equal(
      'POLICY_REFUSED',
    );
    const plan = await lab.run(['config', 'plan', 'node-01', 'files', '--json']);
    expect(plan.exitCode, plan.stdout + plan.stderr).to.equal(7);
    expect((JSON.parse(plan.stdout) as { error: { code: string } }).error.code).to.equal(
      'POLICY_REFUSED',
    );
    const absent = await access(lab.nodePath('node-01', '~/.bashrc')).then(
      () => false,
      () => true,
    );
    expect(absent).to.equal(true);
  });

  it('a node whose policy does not serve the domain: plan and install exit 7 with DOMAIN_NOT_SERVED and its reason', async () => {
    const file = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const text = await readFile(file, 'utf8');
    const { policy } = parseNodePolicy(text, file);
    const { files: _notServed, ...served } = policy.domains;
    await writeNodePolicy(lab.home('node-01'), { ...policy, domains: served }, { force: true });
    try {
      const plan = await lab.run(['config', 'plan', 'node-01', 'files']);
      expect(plan.exitCode, plan.stdout + plan.stderr).to.equal(7);
      expect(plan.stdout).to.contain('an install would be refused: DOMAIN_NOT_SERVED');
      expect(plan.stdout).not.to.contain('an install would change this host');
      expect(plan.stderr).to.contain('does not serve domain files');
      const planJson = await lab.run(['config', 'plan', 'node-01', 'files', '--json']);
      expect(planJson.exitCode).to.equal(7);
      expect(JSON.parse(planJson.stdout)).to.have.nested.property(
        'error.code',
        'DOMAIN_NOT_SERVED',
      );
      const run = await install();
      expect(run.exitCode, run.stdout + run.stderr).to.equal(7);
      expect(JSON.parse(run.stdout)).to.have.nested.property('error.code', 'DOMAIN_NOT_SERVED');
    } finally {
      await writeFile(file, text, { mode: 0o600 });
    }
  });
});
