/**
 * A third-party domain plugin end to end (contract §10.5; issue 7): the built example
 * `examples/fleet-plugin-gitconfig` is linked with the real `fleet plugins link` into a clean,
 * isolated oclif data/config/cache directory; the lab's controllers — `fleet controller serve`
 * under lab supervisors, started with the same environment — load it; the operator adds the
 * domain to a host in the fleet repository (and the host's owner to its node policy), and
 * `fleet drift`, `fleet config plan` and
 * `fleet config install --confirm` work on it like on any bundled domain, leaving the host's own
 * lines in ~/.gitconfig byte for byte. Then the refusals: broken, foreign-API, clashing and
 * outside-home plugins linked next to it are refused on the controllers' stderr (the lab's node
 * log), and the controllers still serve, the example domain included.
 *
 * The isolated oclif directories are set in `process.env` for the duration of this file (and put
 * back after): `fleet()` passes the environment to every CLI run, `fleet lab up` passes it to the
 * lab supervisors, and they to the controllers — exactly how a node's service would inherit it.
 */
import { expect } from 'chai';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  driftReportSchema,
  parseNodePolicy,
  receiptSchema,
  type DomainPlan,
  type DriftReport,
  type IdentityResponse,
} from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { FIXTURES, ROOT, json, tempDir } from '../src/fleet.js';
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
  this.timeout(120_000);
  let lab: Lab;
  let oclif: { path: string; cleanup: () => Promise<void> };
  const saved = new Map<string, string | undefined>();

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

  /** Stops the lab and brings it up again: every controller reloads its plugins. */
  async function restartLab(): Promise<void> {
    const down = await lab.run(['lab', 'down', '--dir', lab.dir]);
    expect(down.exitCode, down.stderr).to.equal(0);
    await lab.up(2);
  }

  it('starts without the plugin: the controllers serve the bundled domains only', async () => {
    const domains = (await identity('node-01')).catalog.domains.map((d) => d.domain);
    expect(domains).to.not.include('gitconfig');
  });

  it('links the built example with the real `fleet plugins link` into the clean data dir', async () => {
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
  });

  it('once restarted, every controller of the lab serves the gitconfig domain', async () => {
    await restartLab();
    for (const host of ['node-01', 'node-02']) {
      const entry = (await identity(host)).catalog.domains.find((d) => d.domain === 'gitconfig');
      expect(entry, host).to.deep.include({
        plugin: 'fleet-plugin-gitconfig',
        version: '0.1.0',
        coupling: 'none',
        implemented: true,
      });
    }
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
      detail: 'the file has no managed block',
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

  describe('refused plugins next to it', () => {
    const bad = [
      'fixture-broken-hook',
      'fixture-future-api',
      'fixture-outside-home',
      'fixture-router-clash',
      'stray-gitconfig-clash',
    ];
    let logBefore = 0;

    before(async () => {
      for (const name of bad) {
        const link = await lab.run([
          'plugins',
          'link',
          join(FIXTURES, 'plugins', name),
          '--no-install',
        ]);
        expect(link.exitCode, link.stderr).to.equal(0);
      }
      logBefore = (await readFile(join(lab.dir, 'nodes', 'node-01', 'supervisor.log'))).length;
      await restartLab(); // lab up itself waits until every controller answers /v1/identity
    });

    it("each controller still serves, the example's domain included", async () => {
      for (const host of ['node-01', 'node-02']) {
        const domains = (await identity(host)).catalog.domains.map(
          (d) => `${d.domain} ${d.plugin}`,
        );
        expect(domains).to.include('gitconfig fleet-plugin-gitconfig');
        expect(domains).to.include('router @fleet/plugin-router');
        expect(domains.some((d) => d.startsWith('passwd ') || d.startsWith('stray-git '))).to.equal(
          false,
        );
      }
      const { exitCode } = await drift('--host', 'node-01', '--domain', 'gitconfig');
      expect(exitCode).to.equal(0);
    });

    it("each refusal is on the controller's stderr (the lab node's log), naming the plugin", async () => {
      const log = (await readFile(join(lab.dir, 'nodes', 'node-01', 'supervisor.log')))
        .subarray(logBefore)
        .toString('utf8');
      const warnings = log.split('\n').filter((line) => line.startsWith('warning: plugin '));
      expect(warnings).to.include(
        'warning: plugin fixture-broken-hook@1.0.0 failed to register: fixture: cannot register',
      );
      expect(warnings).to.include(
        'warning: plugin fixture-future-api@1.0.0 targets fleet plugin API 2, but this fleet provides plugin API 1',
      );
      expect(warnings).to.include(
        'warning: plugin fixture-router-clash@1.0.0 claims domain router, already owned by plugin @fleet/plugin-router@0.1.0',
      );
      expect(warnings).to.include(
        'warning: plugin stray-gitconfig-clash@1.0.0 claims path ~/.gitconfig, already owned by plugin fleet-plugin-gitconfig@0.1.0',
      );
      expect(
        warnings.some((w) => /fixture-outside-home@1\.0\.0 has an invalid registration/.test(w)),
      ).to.equal(true);
    });
  });
  describe('adopt through the plugin (after the refusals: the lab still runs them all)', () => {
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
