/**
 * A third-party domain plugin end to end (contract §10.5; issues 7 and 16): the built example
 * `examples/fleet-plugin-gitconfig` reaches a lab node with no hand install on it. The operator
 * links it with the real `fleet plugins link` into a clean, isolated oclif data/config/cache
 * directory — for the operator's own CLI (rendering, validate): the lab's controllers, started with
 * the same environment, do not load it from there. The operator pins the plugin in fleet.yaml
 * (`plugins`, its tarball in `artifacts/plugins/`), packs a runtime that carries it (the README's
 * recipe: `FLEET_RUNTIME_PLUGINS=… npm pack -w packages/cli`), and until a node runs that runtime
 * `fleet version` reports the plugin missing there (drift). `fleet upgrade node-01 --confirm`
 * delivers it inside the generation; then the domain is added to node-01 in the repository (and to
 * its node policy), and `fleet drift`, `fleet config plan`, `fleet config install --confirm` and
 * `fleet config adopt` work on it like on any bundled domain, leaving the host's own lines in
 * ~/.gitconfig byte for byte. (The refusals of broken, foreign-API, clashing and outside-home
 * plugins carried next to it are test/e2e/controller-plugins.test.ts's: a refused plugin
 * degrades the node's health, so a runtime carrying one is never accepted by an upgrade.)
 *
 * The isolated oclif directories are set in `process.env` for the duration of this file (and put
 * back after): `fleet()` passes the environment to every CLI run, `fleet lab up` passes it to the
 * lab supervisors, and they to the controllers — exactly how a node's service would inherit it.
 */
import { expect } from 'chai';
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  driftReportSchema,
  parseNodePolicy,
  receiptSchema,
  type DomainPlan,
  type DriftReport,
  type IdentityResponse,
  type VersionReport,
} from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { FAKE_ARTIFACT_COMMIT, fakeRuntimeArtifact } from '@fleet/testkit';
import {
  packedPlugin,
  packedRuntimeArtifact,
  type PackedPlugin,
  type RuntimeArtifact,
} from '../src/artifact.js';
import { ROOT, json, tempDir } from '../src/fleet.js';
import { Lab, filesContaining, sha256 } from './lab-fixture.js';

const EXAMPLE = join(ROOT, 'examples', 'fleet-plugin-gitconfig');
const GITCONFIG = '~/.gitconfig';
const CANONICAL = 'domains/gitconfig/gitconfig';
const TOKEN = 'ghp_e2eCanaryValue0123456789abcdef';
/** The host user's own ~/.gitconfig on node-01: CRLF, no final newline. */
const USER_TEXT =
  '# node-01 user settings\r\n[core]\r\n\teditor = nano\r\n[alias]\r\n\tlg = log --oneline';
const CANONICAL_TEXT = `# Managed by fleet: edit domains/gitconfig/gitconfig in the fleet repository.
[user]
\tname = {{ host.git_name }}
\temail = {{ host.git_email }}
[url "https://x-access-token:{{ secret.GITHUB_TOKEN }}@github.com/"]
\tinsteadOf = https://github.com/
[pull]
\tff = only
`;
const ISOLATED = ['FLEET_DATA_DIR', 'FLEET_CONFIG_DIR', 'FLEET_CACHE_DIR'] as const;

describe('e2e: a third-party domain plugin on a lab fleet', function () {
  this.timeout(600_000); // packing the runtime, then an upgrade: minutes on a busy machine
  let lab: Lab;
  let oclif: { path: string; cleanup: () => Promise<void> };
  const saved = new Map<string, string | undefined>();
  let example: PackedPlugin;
  let artifact: RuntimeArtifact;
  let logBefore = 0; // node-01's log before the upgrade: what the new runtime says comes after

  before(async () => {
    oclif = await tempDir('fleet-e2e-oclif-');
    for (const name of ISOLATED) {
      saved.set(name, process.env[name]);
      process.env[name] = join(oclif.path, name.replace(/^FLEET_|_DIR$/g, '').toLowerCase());
    }
    lab = await Lab.create('fleet-e2e-plugin-');
    await lab.up(2); // an existing fleet: only the bundled domains so far
  });
  after(async () => {
    await lab?.destroy();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await oclif?.cleanup();
  });

  async function identity(host: string): Promise<IdentityResponse> {
    return lab.client(host).identity();
  }

  async function drift(...args: string[]): Promise<{ exitCode: number; report: DriftReport }> {
    const run = await lab.run(['drift', ...args, '--json']);
    return { exitCode: run.exitCode, report: driftReportSchema.parse(json(run)) };
  }

  /**
   * Stops the lab and brings it up again: every controller reloads its plugins. As real nodes:
   * without the lab's dev plugins (lab-dev-plugins.test.ts), only what their runtime carries.
   */
  async function restartLab(): Promise<void> {
    const down = await lab.run(['lab', 'down', '--dir', lab.dir]);
    expect(down.exitCode, down.stderr).to.equal(0);
    await lab.up(2, ['--no-dev-plugins']);
  }

  async function version(): Promise<{ exitCode: number; stdout: string; report: VersionReport }> {
    const run = await lab.run(['version', '--json']);
    return { exitCode: run.exitCode, stdout: run.stdout, report: json<VersionReport>(run) };
  }

  it('starts without the plugin: the controllers serve the bundled domains only', async () => {
    const domains = (await identity('node-01')).catalog.domains.map((d) => d.domain);
    expect(domains).to.not.include('gitconfig');
  });

  it('links the built example with the real `fleet plugins link`: for the operator’s CLI only', async () => {
    const link = await lab.run(['plugins', 'link', EXAMPLE, '--no-install']);
    expect(link.exitCode, link.stderr).to.equal(0);
    const listed = await lab.run(['plugins']);
    expect(listed.stdout).to.match(/fleet-plugin-gitconfig 0\.1\.0 \(link\)/);
    const data = JSON.parse(
      await readFile(join(process.env['FLEET_DATA_DIR'] as string, 'package.json'), 'utf8'),
    ) as { oclif: { plugins: { name: string; type: string; root: string }[] } };
    expect(data.oclif.plugins).to.deep.equal([
      { name: 'fleet-plugin-gitconfig', type: 'link', root: EXAMPLE },
    ]);
    // Restarted with that data directory in their environment, the nodes still do not load it:
    // a node loads plugins only from its generation (contract §10.5).
    await restartLab();
    for (const host of ['node-01', 'node-02']) {
      const domains = (await identity(host)).catalog.domains.map((d) => d.domain);
      expect(domains, host).to.not.include('gitconfig');
    }
  });

  it('the operator pins the plugin: a canonical artifact that lacks it is refused (exit 2, naming it)', async () => {
    example = await packedPlugin(EXAMPLE);
    await mkdir(join(lab.repo, 'artifacts', 'plugins'), { recursive: true });
    await copyFile(
      example.path,
      join(lab.repo, 'artifacts', 'plugins', 'fleet-plugin-gitconfig-0.1.0.tgz'),
    );
    const bare = fakeRuntimeArtifact({ version: '0.0.9-bare' });
    await writeFile(join(lab.repo, 'artifacts', 'fleet-0.0.9-bare.tgz'), bare);
    await lab.commitEdit(
      'fleet.yaml',
      (text) => {
        const entry = `  - version: 0.0.9-bare\n    file: artifacts/fleet-0.0.9-bare.tgz\n    sha256: ${sha256(bare)}\n    commit: ${FAKE_ARTIFACT_COMMIT}\n`;
        const withVersion = text.replace(/^canonicalVersion: .*$/m, 'canonicalVersion: 0.0.9-bare');
        const withArtifact = /^artifacts:/m.test(withVersion)
          ? withVersion.replace(/^artifacts:.*\n/m, (line) => `${line.replace(' []', '')}${entry}`)
          : `${withVersion}artifacts:\n${entry}`;
        return `${withArtifact}plugins:\n  - name: fleet-plugin-gitconfig\n    version: 0.1.0\n    sha256: ${example.sha256}\n`;
      },
      'pin fleet-plugin-gitconfig',
    );
    const line = `fleet.yaml names plugin fleet-plugin-gitconfig 0.1.0 (sha256 ${example.sha256.slice(0, 12)}), but the artifact artifacts/fleet-0.0.9-bare.tgz carries no plugin fleet-plugin-gitconfig`;
    const upgrade = await lab.run(['upgrade', 'node-01', '--confirm', '--json']);
    expect(upgrade.exitCode, upgrade.stdout + upgrade.stderr).to.equal(2);
    expect(json<{ error: { code: string; message: string } }>(upgrade).error).to.include({
      code: 'ARTIFACT_PLUGINS',
      message: line,
    });
    const plan = await lab.run(['bootstrap', 'plan', 'node-01']);
    expect(plan.exitCode, plan.stderr).to.equal(2);
    expect(plan.stderr).to.contain(line);
    const validate = await lab.run(['validate']);
    expect(validate.exitCode, validate.stderr).to.equal(2);
    expect(validate.stderr).to.contain(line);
    // Nothing was sent: node-01 still runs its development build.
    expect((await identity('node-01')).build.sha256).to.equal(null);
  });

  it('the operator packs a runtime that carries the plugin and lists it as canonical', async () => {
    artifact = await packedRuntimeArtifact([example.path]);
    await copyFile(artifact.path, join(lab.repo, 'artifacts', `fleet-${artifact.version}.tgz`));
    await lab.commitEdit(
      'fleet.yaml',
      (text) => {
        const withVersion = text.replace(
          /^canonicalVersion: .*$/m,
          `canonicalVersion: ${artifact.version}`,
        );
        const entry = `  - version: ${artifact.version}\n    file: artifacts/fleet-${artifact.version}.tgz\n    sha256: ${artifact.sha256}\n    commit: ${artifact.commit}\n    signature: ${lab.signature(artifact.path)}\n`;
        const withArtifact = /^artifacts:/m.test(withVersion)
          ? withVersion.replace(/^artifacts:.*\n/m, (line) => `${line.replace(' []', '')}${entry}`)
          : `${withVersion}artifacts:\n${entry}`;
        return withArtifact;
      },
      'the runtime that carries fleet-plugin-gitconfig',
    );
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
  });

  it('fleet version: a node whose catalog lacks the pinned plugin is drift (exit 1)', async () => {
    const { exitCode, stdout, report } = await version();
    expect(exitCode, stdout).to.equal(1);
    for (const host of report.hosts) {
      const item = host.items.find((i) => i.kind === 'plugin');
      expect(item, host.host).to.deep.include({
        name: 'fleet-plugin-gitconfig',
        state: 'missing',
        expected: '0.1.0',
        expectedSha256: example.sha256,
        detail: `fleet.yaml names plugin fleet-plugin-gitconfig 0.1.0 (sha256 ${example.sha256.slice(0, 12)}), but the node carries no plugin fleet-plugin-gitconfig: upgrade it to an artifact that carries it (contract §10.5)`,
      });
      expect(host.status).to.equal('drifted');
    }
    const human = await lab.run(['version', '--host', 'node-01']);
    expect(human.exitCode).to.equal(1);
    expect(human.stdout).to.match(/missing\s+plugin\s+fleet-plugin-gitconfig/);
  });

  it('fleet upgrade node-01 --confirm delivers the plugin inside the generation: no hand install', async () => {
    logBefore = (await readFile(join(lab.dir, 'nodes', 'node-01', 'supervisor.log'))).length;
    const upgraded = await lab.run(['upgrade', 'node-01', '--confirm', '--json']);
    if (upgraded.exitCode !== 0) {
      // What the runner and the new runtime said: the evidence a failed upgrade keeps.
      const journal = lab.nodePath('node-01', '~/.local/state/fleet/journal');
      const runners = (await readdir(journal)).filter((f) => f.startsWith('runner-'));
      const logs = await Promise.all(runners.map((f) => readFile(join(journal, f), 'utf8')));
      const node = (await readFile(join(lab.dir, 'nodes', 'node-01', 'supervisor.log')))
        .subarray(logBefore)
        .toString('utf8');
      expect.fail(`${upgraded.stdout}${upgraded.stderr}\n${logs.join('\n')}\n${node}`);
    }
    expect(json<{ outcome: string }>(upgraded).outcome).to.equal('accepted');
    // The new runtime loaded it cleanly: no plugin refused in node-01's log since.
    const log = (await readFile(join(lab.dir, 'nodes', 'node-01', 'supervisor.log')))
      .subarray(logBefore)
      .toString('utf8');
    expect(log.split('\n').filter((line) => line.startsWith('warning: plugin'))).to.deep.equal([]);
    const { catalog, build } = await identity('node-01');
    expect(build.sha256).to.equal(artifact.sha256);
    expect(catalog.plugins).to.deep.equal([
      {
        name: 'fleet-plugin-gitconfig',
        version: '0.1.0',
        sha256: example.sha256,
        domains: ['gitconfig'],
      },
    ]);
    expect(catalog.domains.find((d) => d.domain === 'gitconfig')).to.deep.include({
      plugin: 'fleet-plugin-gitconfig',
      version: '0.1.0',
      coupling: 'none',
      implemented: true,
    });
    // node-01 is current for the plugin now; node-02, not upgraded, still lacks it.
    const { exitCode, report } = await version();
    expect(exitCode).to.equal(1);
    const state = (host: string) =>
      report.hosts.find((h) => h.host === host)?.items.find((i) => i.kind === 'plugin')?.state;
    expect(state('node-01')).to.equal('current');
    expect(state('node-02')).to.equal('missing');
  });

  it('the operator adds the domain to node-01: fleet.yaml, canonical, host variables, a commit', async () => {
    // node-01's user already has a ~/.gitconfig of their own; its secret lives in the node's env.
    await lab.writeNode('node-01', GITCONFIG, USER_TEXT);
    await lab.writeNode('node-01', '~/.config/fleet/env', `GITHUB_TOKEN=${TOKEN}\n`);
    // node-01's owner serves the new domain (its node policy, contract §5.1); node-02's does not.
    const policyFile = lab.nodePath('node-01', '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(policyFile, 'utf8'), policyFile);
    await writeNodePolicy(
      lab.home('node-01'),
      { ...policy, domains: { ...policy.domains, gitconfig: {} } },
      { force: true },
    );

    const manifest = join(lab.repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    const node01 = text.indexOf('  node-01:');
    const line = text.indexOf('    domains: [', node01);
    expect(line).to.be.greaterThan(node01);
    await writeFile(
      manifest,
      `${text.slice(0, line)}    domains: [gitconfig, ${text.slice(line + '    domains: ['.length)}`.replace(
        /\ndomains:\n/,
        '\ndomains:\n  gitconfig: { unattended: deny }\n',
      ),
    );
    await mkdir(join(lab.repo, 'domains', 'gitconfig'), { recursive: true });
    await writeFile(join(lab.repo, ...CANONICAL.split('/')), CANONICAL_TEXT);
    const hostFile = join(lab.repo, 'hosts', 'node-01.yaml');
    await writeFile(
      hostFile,
      `${await readFile(hostFile, 'utf8')}git_name: "Node One"\ngit_email: "node-01@fleet.example"\n`,
    );
    lab.git('add', '--all');
    lab.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      'gitconfig on node-01',
    );
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stdout + validate.stderr).to.equal(0);
    expect(validate.stderr).to.equal('');
  });

  it('fleet drift: node-01 has no fleet block yet (missing, exit 1); node-02 does not run the domain', async () => {
    const { exitCode, report } = await drift('--domain', 'gitconfig');
    expect(exitCode).to.equal(1);
    const node01 = report.hosts.find((h) => h.host === 'node-01');
    const item = node01?.items.find((i) => i.layer === 'file' && i.path === GITCONFIG);
    expect(item).to.deep.include({
      domain: 'gitconfig',
      state: 'missing',
      detail: 'the file has no managed block (fleet never installed one here)',
    });
    // The plugin's prober rides along: git itself resolves no identity yet.
    const derived = node01?.items.find((i) => i.layer === 'derived' && i.domain === 'gitconfig');
    expect(derived).to.deep.include({ state: 'missing' });
    const node02 = report.hosts.find((h) => h.host === 'node-02');
    expect(node02?.items.filter((i) => i.domain === 'gitconfig') ?? []).to.deep.equal([]);
  });

  it('fleet config plan node-01 gitconfig: the block to add, planned against the live sha256', async () => {
    const run = await lab.run(['config', 'plan', 'node-01', 'gitconfig', '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    const [plan] = json<{ plans: DomainPlan[] }>(run).plans;
    expect(plan?.files.map((f) => [f.item.path, f.item.state])).to.deep.equal([
      [GITCONFIG, 'missing'],
    ]);
    expect(JSON.stringify(plan)).to.contain(sha256(USER_TEXT));
    expect(JSON.stringify(plan)).to.contain('{{ secret.GITHUB_TOKEN }}').and.not.contain(TOKEN);
    expect((await lab.readNode('node-01', GITCONFIG)).toString('utf8')).to.equal(USER_TEXT); // nothing written
  });

  it('fleet config install node-01 gitconfig --confirm: the block is spliced in, the rest byte for byte', async () => {
    const run = await lab.run(['config', 'install', 'node-01', 'gitconfig', '--confirm', '--json']);
    expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
    const receipt = receiptSchema.parse(json<{ receipt: unknown }>(run).receipt);
    expect(receipt).to.include({ outcome: 'installed', verified: true, domain: 'gitconfig' });
    const live = (await lab.readNode('node-01', GITCONFIG)).toString('utf8');
    const block = CANONICAL_TEXT.replace('{{ host.git_name }}', 'Node One')
      .replace('{{ host.git_email }}', 'node-01@fleet.example')
      .replace('{{ secret.GITHUB_TOKEN }}', TOKEN)
      .replace(/\n/g, '\r\n');
    expect(live).to.equal(
      `${USER_TEXT}\r\n\r\n# fleet:gitconfig:begin\r\n${block}# fleet:gitconfig:end\r\n`,
    );
    // The secret reached the node's file only: not the repo, not the operator's output or log.
    expect(await filesContaining(lab.repo, TOKEN)).to.deep.equal([]);
    expect(await filesContaining(lab.stateHome, TOKEN)).to.deep.equal([]);
    expect(lab.runs.some((r) => r.stdout.includes(TOKEN) || r.stderr.includes(TOKEN))).to.equal(
      false,
    );
  });

  it('fleet drift is clean for the domain afterwards (exit 0)', async () => {
    const { exitCode, report } = await drift('--host', 'node-01', '--domain', 'gitconfig');
    expect(exitCode).to.equal(0);
    const states = report.hosts[0]?.items.map((i) => [i.layer, i.domain, i.state]);
    // The file's block, and what git itself resolves (the plugin's prober, run by the node).
    expect(states).to.deep.equal([
      ['file', 'gitconfig', 'current'],
      ['derived', 'gitconfig', 'current'],
    ]);
  });

  it("the plugin's prober runs in node-01's controller and sees git's effective identity", async function () {
    const probe = await lab
      .client('node-01')
      .probe({ prober: 'gitconfig.identity', parameters: {} });
    expect(probe).to.include({ prober: 'gitconfig.identity', layer: 'derived' });
    const facts = probe.facts as { git: string; email?: string | null };
    if (facts.git !== 'present') this.skip(); // no git on this machine: nothing more to see
    expect(facts.email).to.equal('node-01@fleet.example');
  });

  describe('adopt through the plugin', () => {
    it("fleet config adopt node-01 ~/.gitconfig: the block's body, host values back to names", async () => {
      const live = (await lab.readNode('node-01', GITCONFIG)).toString('utf8');
      const edited = live.replace('\tff = only\r\n', '\tff = only\r\n\trebase = false\r\n');
      expect(edited).to.not.equal(live);
      await lab.writeNode('node-01', GITCONFIG, edited);
      const { report } = await drift('--host', 'node-01', '--domain', 'gitconfig');
      const item = report.hosts[0]?.items.find((i) => i.layer === 'file' && i.path === GITCONFIG);
      expect(item?.state).to.equal('diverged');

      const run = await lab.run(['config', 'adopt', 'node-01', GITCONFIG, '--json']);
      expect(run.exitCode, run.stdout + run.stderr).to.equal(0);
      const mirror = 'mirror/node-01/gitconfig/gitconfig';
      expect(json<{ mirrorPath: string; domain: string }>(run)).to.include({
        mirrorPath: mirror,
        domain: 'gitconfig',
      });
      const adopted = lab.git('show', `HEAD:${mirror}`);
      expect(adopted).to.equal(`${CANONICAL_TEXT}\trebase = false\n`);
      expect(adopted).to.not.contain('editor = nano'); // the user's own lines are never adopted
      expect(await filesContaining(lab.repo, TOKEN)).to.deep.equal([]);
    });
  });
});
