/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * `fleet controller serve`, `fleet token issue|list|rotate|revoke`, `fleet node-policy
 * init|show` and `fleet validate --node-policy`, run as real processes of the built CLI against
 * temp homes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

function fleet(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('fleet token and fleet controller serve', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-cli-node-'));
  });
  after(async () => rm(home, { recursive: true, force: true }));

  it('issues, lists, rotates and revokes tokens with the --json shapes of contract §7', async () => {
    const issued = fleet([
      'token',
      'issue',
      '--client',
      'laptop',
      '--scope',
      'config:read',
      '--scope',
      'config:install',
      '--home',
      home,
      '--json',
    ]);
    expect(issued.status, issued.stderr).to.equal(0);
    const token = JSON.parse(issued.stdout);
    expect(Object.keys(token).sort()).to.deep.equal([
      'client',
      'expiresAt',
      'id',
      'scopes',
      'token',
    ]);
    expect(token).to.include({ client: 'laptop' });
    expect(token.scopes).to.deep.equal(['config:read', 'config:install']);
    const store = await readFile(join(home, '.local/state/fleet/tokens.json'), 'utf8');
    expect(store).to.not.contain(token.token);

    const listed = JSON.parse(fleet(['token', 'list', '--home', home, '--json']).stdout);
    expect(listed.tokens).to.have.length(1);
    expect(listed.tokens[0]).to.include({ id: token.id, state: 'active' });
    expect(JSON.stringify(listed)).to.not.contain(token.token);
    expect(listed.tokens[0]).to.not.have.property('sha256');

    const rotated = JSON.parse(
      fleet(['token', 'rotate', token.id, '--grace', '5m', '--home', home, '--json']).stdout,
    );
    expect(rotated).to.include({ rotatedFrom: token.id, client: 'laptop' });
    expect(rotated.id).to.not.equal(token.id);

    const revoked = fleet(['token', 'revoke', rotated.id, '--home', home, '--json']);
    expect(revoked.status).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ id: rotated.id });
    const states = JSON.parse(fleet(['token', 'list', '--home', home, '--json']).stdout).tokens.map(
      (t: { state: string }) => t.state,
    );
    expect(states).to.deep.equal(['grace', 'revoked']);
  });

  it('refuses a misspelled scope with exit 2 and the JSON error envelope', () => {
    const result = fleet([
      'token',
      'issue',
      '--client',
      'x',
      '--scope',
      'Config:Install',
      '--home',
      home,
      '--json',
    ]);
    expect(result.status).to.equal(2);
    expect(JSON.parse(result.stdout).error).to.include({ code: 'USAGE', exitCode: 2 });
  });

  it('controller serve does not start on a node without a policy, naming the fix (exit 2)', () => {
    const result = fleet([
      'controller',
      'serve',
      '--home',
      home,
      '--node-id',
      'node-07',
      '--port',
      '0',
    ]);
    expect(result.status).to.equal(2);
    expect(result.stderr).to.contain('this node has no policy');
    expect(result.stderr).to.contain(`hint: on the node: fleet node-policy init --home ${home}`);
  });

  it('node-policy init writes a 0600 policy serving the bundled domains; show reads it; a second init needs --force', async () => {
    const init = fleet(['node-policy', 'init', '--home', home, '--tool', 'node', '--json']);
    expect(init.status, init.stderr).to.equal(0);
    const written = JSON.parse(init.stdout);
    expect(written).to.deep.equal({
      file: join(home, '.config/fleet/node-policy.yaml'),
      serves: ['files', 'harness-policy', 'router', 'transport-identity'],
      tools: ['node'],
    });
    expect((await stat(written.file)).mode & 0o777).to.equal(0o600);
    expect(await readFile(written.file, 'utf8')).to.contain('bootstrap:\n  allow: false');

    const shown = fleet(['node-policy', 'show', '--home', home]);
    expect(shown.status, shown.stderr).to.equal(0);
    expect(shown.stdout).to.contain('serves: files, harness-policy, router, transport-identity');
    expect(shown.stdout).to.contain('versions may run: node');
    expect(shown.stdout).to.contain('bootstrap: denied');
    expect(shown.stdout).to.contain('release signatures: no trusted key (runtime changes refused)');

    const again = fleet(['node-policy', 'init', '--home', home, '--json']);
    expect(again.status).to.equal(2);
    expect(JSON.parse(again.stdout).error.code).to.equal('INIT_TARGET_NOT_EMPTY');
    const unknown = fleet(['node-policy', 'init', '--home', home, '--serve', 'nosuch', '--force']);
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.contain('--serve nosuch: no loaded plugin provides this domain');
  });

  it('node-policy show names the login PATH fleet version probes tools on, learned from the login shell', async () => {
    // The profiles a login bash, sh (dash) or zsh reads: each prepends ~/login-bin.
    const profile = 'echo "profile banner"\nPATH="$HOME/login-bin:$PATH"; export PATH\n';
    for (const file of ['.bash_profile', '.profile', '.zprofile']) {
      await writeFile(join(home, file), profile);
    }
    const shown = fleet(['node-policy', 'show', '--home', home]);
    expect(shown.status, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(
      new RegExp(
        `versions probe tools on the login PATH ${join(home, 'login-bin')}:\\S+ \\(learned from \\S+ -l\\)`,
      ),
    );
    const json = fleet(['node-policy', 'show', '--home', home, '--json']);
    const { loginPath } = JSON.parse(json.stdout);
    expect(loginPath.source, loginPath.detail).to.equal('login-shell');
    expect(loginPath.path.split(':')[0]).to.equal(join(home, 'login-bin'));
  });

  it('validate --node-policy checks a file as a controller reads it: line and field, mode', async () => {
    const file = join(home, 'draft-policy.yaml');
    await writeFile(
      file,
      'version: 1\ndomains:\n  router:\n    actions:\n      reload: { argv: [systemctl, reload] }\n',
      { mode: 0o600 },
    );
    const bad = fleet(['validate', '--node-policy', file, '--json']);
    expect(bad.status).to.equal(2);
    const error = JSON.parse(bad.stdout).error;
    expect(error.code).to.equal('NODE_POLICY_INVALID');
    expect(error.problems[0]).to.include({
      file,
      line: 5,
      path: 'domains.router.actions.reload.argv[0]',
    });
    await writeFile(file, 'version: 1\ndomains: { router: {} }\n', { mode: 0o600 });
    const good = fleet(['validate', '--node-policy', file]);
    expect(good.status, good.stderr).to.equal(0);
    expect(good.stdout).to.contain('a valid node policy').and.contain('serves: router');
    await chmod(file, 0o644);
    const wide = fleet(['validate', '--node-policy', file, '--json']);
    expect(JSON.parse(wide.stdout).error.code).to.equal('NODE_POLICY_INSECURE');
  });

  it('validate --node-policy warns about a domain no plugin here provides, and still checks the rest (issue 40)', async () => {
    const file = join(home, 'draft-policy.yaml');
    await writeFile(
      file,
      'version: 1\ndomains:\n  ssh-config:\n    actions:\n      ssh-validate: { argv: [~/bin/check, "{file}"] }\n  router: {}\n',
      { mode: 0o600 },
    );
    await chmod(file, 0o600);
    const run = fleet(['validate', '--node-policy', file, '--json']);
    expect(run.status, run.stderr).to.equal(0);
    const result = JSON.parse(run.stdout);
    expect(result.valid).to.equal(true);
    expect(result.warnings).to.have.length(1);
    expect(result.warnings[0]).to.contain('domains.ssh-config: no plugin this CLI loads provides');
    expect(run.stderr).to.contain('warning: ').and.contain('domains.ssh-config');
    // What it can check is still checked: a router path another domain owns is refused.
    await writeFile(
      file,
      'version: 1\ndomains:\n  ssh-config: {}\n  router:\n    paths:\n      nosuch: ["~/x"]\n',
      { mode: 0o600 },
    );
    const bad = fleet(['validate', '--node-policy', file, '--json']);
    expect(bad.status).to.equal(2);
    expect(JSON.parse(bad.stdout).error.problems[0].path).to.equal('domains.router.paths.nosuch');
  });

  it('validate --node-policy and node-policy show name each allowed path that runs code, and refuse an unmarked broad pattern', async () => {
    const policyHome = await mkdtemp(join(tmpdir(), 'fleet-cli-code-'));
    try {
      const file = join(policyHome, '.config/fleet/node-policy.yaml');
      await mkdir(join(policyHome, '.config/fleet'), { recursive: true });
      await writeFile(
        file,
        "version: 1\ndomains:\n  files: { patterns: ['~/.config/fleet-demo/*.yaml', '~/.gitconfig', '~/.*/**'] }\n",
        { mode: 0o600 },
      );
      const broad = fleet(['validate', '--node-policy', file, '--json']);
      expect(broad.status).to.equal(2);
      expect(JSON.parse(broad.stdout).error.problems[0]).to.include({
        line: 3,
        path: 'domains.files.patterns[2]',
      });
      await writeFile(
        file,
        "version: 1\ndomains:\n  files:\n    patterns: ['~/.config/fleet-demo/*.yaml', '~/.gitconfig', { pattern: '~/.*/**', broad: true }]\n",
        { mode: 0o600 },
      );
      const valid = fleet(['validate', '--node-policy', file, '--json']);
      expect(valid.status, valid.stderr).to.equal(0);
      const grants = JSON.parse(valid.stdout).codeBearing;
      expect(grants.map((g: { field: string }) => g.field)).to.deep.equal([
        'domains.files.patterns[1]',
        'domains.files.patterns[2]',
      ]);
      const shown = fleet(['node-policy', 'show', '--home', policyHome]);
      expect(shown.status, shown.stderr).to.equal(0);
      expect(shown.stdout).to.contain(
        'files paths: ~/.config/fleet-demo/*.yaml, ~/.gitconfig, ~/.*/** (broad)',
      );
      expect(shown.stdout).to.contain(
        "code execution: a config:install of these paths can run code as this node's user",
      );
      expect(shown.stdout).to.contain(
        '  ~/.gitconfig (domains.files.patterns[1]): git runs the programs its configuration names',
      );
      expect(shown.stdout).to.contain(
        '  ~/.*/** reaches ~/.ssh/** (domains.files.patterns[2]): sshd obeys authorized_keys',
      );
      expect(shown.stdout).to.not.contain('fleet-demo/*.yaml (domains');
    } finally {
      await rm(policyHome, { recursive: true, force: true });
    }
  });

  it('serves on an ephemeral port, prints one JSON line, answers identity, and stops on SIGTERM', async () => {
    const token = JSON.parse(
      fleet([
        'token',
        'issue',
        '--client',
        'op',
        '--scope',
        'config:read',
        '--home',
        home,
        '--json',
      ]).stdout,
    ).token;
    const child = spawn(
      process.execPath,
      [BIN, 'controller', 'serve', '--home', home, '--node-id', 'node-07', '--port', '0', '--json'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0] as string);
      });
      void exited.then((code) => reject(new Error(`serve exited ${code}`)));
    });
    const started = JSON.parse(line);
    expect(started).to.include({ nodeId: 'node-07' });
    expect(started.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${started.url}/v1/identity`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).to.equal(200);
    const identity = (await response.json()) as {
      nodeId: string;
      catalog: {
        domains: { domain: string }[];
        bootstrapAdapters: { supervisor: string; plugin: string }[];
      };
    };
    expect(identity.nodeId).to.equal('node-07');
    expect(identity.catalog.domains.map((d) => d.domain)).to.include.members([
      'router',
      'transport-identity',
      'harness-policy',
    ]);
    // The CLI's own fleet:register hook adds the lab supervisor's adapter.
    expect(
      identity.catalog.bootstrapAdapters.map((a) => `${a.supervisor} ${a.plugin}`),
    ).to.include.members([
      'lab @fleet/cli',
      'launchd @fleet/plugin-bootstrap-launchd',
      'systemd-user @fleet/plugin-bootstrap-systemd',
      'windows-task @fleet/plugin-bootstrap-windows',
    ]);
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
