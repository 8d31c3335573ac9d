/** `fleet init` and `fleet validate`, through the real binary (issue: foundation). */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fleet, json, tempDir } from '../src/fleet.js';

const git = (repo: string, ...args: string[]) =>
  execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });

describe('fleet init', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => dir.cleanup());

  it('creates a git repository with fleet.yaml, a host, every domain example and one commit', async () => {
    const repo = join(dir.path, 'fleet');
    const run = await fleet(['init', repo, '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    const result = json<{ root: string; commit: string; files: string[] }>(run);
    expect(result.root).to.equal(repo);
    expect(result.files).to.include.members([
      'fleet.yaml',
      'hosts/node-01.yaml',
      'domains/router/router.yaml',
      'domains/transport-identity/transport.yaml',
      'domains/harness-policy/CLAUDE.md',
    ]);
    expect(git(repo, 'rev-list', '--count', 'HEAD').trim()).to.equal('1');
    expect(git(repo, 'rev-parse', 'HEAD').trim()).to.equal(result.commit);
    expect(git(repo, 'status', '--porcelain')).to.equal('');
  });

  it('refuses a directory that is not empty, and writes nothing into it', async () => {
    await writeFile(join(dir.path, 'keep.txt'), 'mine\n');
    const run = await fleet(['init', dir.path]);
    expect(run.exitCode).to.equal(2);
    expect(run.stderr.trim().split('\n')).to.have.length(1);
    expect(run.stderr).to.match(/is not empty/);
    expect(await readdir(dir.path)).to.deep.equal(['keep.txt']);
  });
});

describe('fleet validate', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let repo: string;
  beforeEach(async () => {
    dir = await tempDir();
    repo = join(dir.path, 'fleet');
    const init = await fleet(['init', repo]);
    expect(init.exitCode, init.stderr).to.equal(0);
  });
  afterEach(() => dir.cleanup());

  const validate = (...extra: string[]) => fleet(['validate', '--repo', repo, ...extra]);

  it('passes the repository init made, rendering every file for every host', async () => {
    const run = await validate('--json');
    expect(run.exitCode, run.stderr).to.equal(0);
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    expect(json(run)).to.deep.equal({
      valid: true,
      repo,
      checked: 'working-tree',
      headCommit: head,
      uncommitted: [],
      hosts: 1,
      domains: 4,
      rendered: 6,
    });
  });

  it('checks the working tree, and names what drift, plan and install would not read yet', async () => {
    await appendFile(join(repo, 'hosts', 'node-01.yaml'), '# edited, not committed\n');
    const run = await validate('--json');
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(json(run)).to.deep.include({
      checked: 'working-tree',
      uncommitted: ['hosts/node-01.yaml'],
    });
    const human = await validate();
    expect(human.stdout).to.contain('(the working tree, uncommitted changes included)');
    expect(human.stdout).to.match(
      /Not committed yet \(drift, plan and install read commit [0-9a-f]{12} until you commit\): hosts\/node-01\.yaml/,
    );
  });

  it('finds the repository from FLEET_REPO and by walking up from a subdirectory', async () => {
    const viaEnv = await fleet(['validate', '--json'], {
      cwd: dir.path,
      env: { FLEET_REPO: repo },
    });
    expect(viaEnv.exitCode, viaEnv.stderr).to.equal(0);
    const nested = join(repo, 'domains', 'router');
    const viaWalk = await fleet(['validate', '--json'], { cwd: nested });
    expect(viaWalk.exitCode, viaWalk.stderr).to.equal(0);
    expect(json(viaWalk)['repo']).to.equal(repo);
  });

  it('names the file, line and field of an unknown field and a bad value (exit 2)', async () => {
    const manifest = join(repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    await writeFile(
      manifest,
      `${text.replace('platform: linux', 'platform: plan9')}colour: blue\n`,
    );
    const run = await validate('--json');
    expect(run.exitCode).to.equal(2);
    const { error } = json<{ error: { code: string; exitCode: number; problems: object[] } }>(run);
    expect(error.code).to.equal('FLEET_YAML_INVALID');
    expect(error.exitCode).to.equal(2);
    expect(error.problems).to.deep.include({
      file: 'fleet.yaml',
      line: text.split('\n').findIndex((l) => l.includes('platform:')) + 1,
      path: 'hosts.node-01.platform',
      message: 'Invalid option: expected one of "linux"|"darwin"|"win32"',
    });
    expect(error.problems).to.deep.include({
      file: 'fleet.yaml',
      line: text.split('\n').length,
      path: 'colour',
      message: 'unknown field',
    });
  });

  it('checks each pinned plugin tarball in artifacts/plugins against its sha256 (contract §10.5)', async () => {
    const manifest = join(repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    const good = Buffer.from('the npm pack of fleet-plugin-a\n');
    const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
    await mkdir(join(repo, 'artifacts', 'plugins'), { recursive: true });
    await writeFile(join(repo, 'artifacts', 'plugins', 'fleet-plugin-a-1.0.0.tgz'), good);
    await writeFile(join(repo, 'artifacts', 'plugins', 'acme-fleet-b-2.0.0.tgz'), 'tampered\n');
    await writeFile(
      manifest,
      `${text}plugins:\n` +
        `  - { name: fleet-plugin-a, version: 1.0.0, sha256: ${sha(good)} }\n` +
        `  - { name: '@acme/fleet-b', version: 2.0.0, sha256: ${'b'.repeat(64)} }\n` +
        `  - { name: fleet-plugin-c, version: 0.1.0, sha256: ${'c'.repeat(64)} }\n`,
    );
    const run = await validate('--json');
    expect(run.exitCode, run.stdout).to.equal(2);
    const { error } = json<{
      error: { code: string; problems: { path: string; message: string }[] };
    }>(run);
    expect(error.code).to.equal('REPO_INVALID');
    const lines = text.split('\n').length; // `plugins:` is this line: text ends with a newline
    expect(error.problems).to.deep.equal([
      {
        file: 'fleet.yaml',
        line: lines + 2,
        path: 'plugins.1',
        message: `artifacts/plugins/acme-fleet-b-2.0.0.tgz has sha256 ${sha(Buffer.from('tampered\n'))}, but fleet.yaml pins plugin @acme/fleet-b 2.0.0 to ${'b'.repeat(64)}`,
      },
      {
        file: 'fleet.yaml',
        line: lines + 3,
        path: 'plugins.2',
        message:
          'plugin fleet-plugin-c 0.1.0: its tarball artifacts/plugins/fleet-plugin-c-0.1.0.tgz cannot be read (ENOENT): keep the npm pack of the plugin there',
      },
    ]);
  });

  it('reports malformed YAML with its line, on one line', async () => {
    await writeFile(join(repo, 'hosts', 'node-01.yaml'), 'node_id: [unclosed\n');
    const run = await validate();
    expect(run.exitCode).to.equal(2);
    expect(run.stdout).to.equal('');
    expect(run.stderr.trim().split('\n')).to.have.length(1);
    expect(run.stderr).to.match(/^Error: hosts\/node-01\.yaml:\d+: /);
  });

  it('refuses a host file for a host fleet.yaml does not declare', async () => {
    await writeFile(join(repo, 'hosts', 'ghost.yaml'), 'node_id: ghost\n');
    const run = await validate();
    expect(run.exitCode).to.equal(2);
    expect(run.stderr).to.contain(
      'hosts/ghost.yaml: host ghost is not declared under hosts: in fleet.yaml',
    );
  });

  it('refuses an unknown domain, naming the registered ones', async () => {
    const manifest = join(repo, 'fleet.yaml');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace('- router', '- routr'));
    const run = await validate();
    expect(run.exitCode).to.equal(2);
    expect(run.stderr).to.match(
      /^Error: fleet\.yaml:\d+: hosts\.node-01\.domains\[2\]: unknown domain "routr" \(registered: files, harness-policy, router, transport-identity\)\n$/,
    );
  });

  it('fails every template that uses an undeclared or missing variable, with file and line', async () => {
    const router = join(repo, 'domains', 'router', 'router.yaml');
    const ownerLine = (await readFile(router, 'utf8')).split('\n').length; // the line appended next
    await appendFile(router, 'owner: {{ host.owner }}\n');
    await writeFile(join(repo, 'hosts', 'node-01.yaml'), 'other: x\n');
    const run = await validate('--json');
    expect(run.exitCode).to.equal(2);
    const messages = json<{
      error: { problems: { file: string; line: number; message: string }[] };
    }>(run).error.problems.map((p) => `${p.file}:${p.line}: ${p.message}`);
    expect(messages).to.include.members([
      'domains/router/router.yaml:3: host variable node_id is not set in hosts/node-01.yaml',
      `domains/router/router.yaml:${ownerLine}: host variable owner is not declared by this domain (allowed: node_id, router_config_path, router_volume_path)`,
      'domains/transport-identity/transport.yaml:2: host variable node_id is not set in hosts/node-01.yaml',
    ]);
  });

  it("runs each domain installer's check: a router.yaml no install would accept fails", async () => {
    await appendFile(join(repo, 'domains', 'router', 'router.yaml'), 'broken: [unclosed\n');
    const run = await validate();
    expect(run.exitCode).to.equal(2);
    expect(run.stderr).to.match(/^Error: domains\/router\/router\.yaml:\d+: /);
  });

  it('writes nothing, ever', async () => {
    await mkdir(join(repo, 'hosts', 'sub'), { recursive: true });
    await validate();
    await validate('--json');
    expect(
      execFileSync('git', ['-C', repo, 'status', '--porcelain'], { encoding: 'utf8' }),
    ).to.equal('');
  });

  it('reports a missing repository as a usage error', async () => {
    const run = await fleet(['validate', '--json'], { cwd: dir.path });
    expect(run.exitCode).to.equal(2);
    expect(json<{ error: { code: string } }>(run).error.code).to.equal('REPO_NOT_FOUND');
  });
});

describe('the repository a verb uses is named (a leftover $FLEET_REPO is never silent)', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let mine: string;
  let lab: string;
  before(async () => {
    dir = await tempDir();
    mine = join(dir.path, 'mine');
    lab = join(dir.path, 'lab-repo');
    for (const repo of [mine, lab]) {
      const init = await fleet(['init', repo]);
      expect(init.exitCode, init.stderr).to.equal(0);
    }
    await mkdir(join(mine, 'notes', 'deeper'), { recursive: true });
  });
  after(() => dir.cleanup());

  it('warns on stderr when the working directory is inside another repository than the one used', async () => {
    const run = await fleet(['validate'], {
      cwd: join(mine, 'notes', 'deeper'),
      env: { FLEET_REPO: lab },
    });
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stderr).to.contain(
      `warning: using the fleet repository ${lab} (from $FLEET_REPO), not ${mine} that the working directory is in: unset FLEET_REPO`,
    );
    const plain = await fleet(['validate'], { cwd: mine });
    expect(plain.exitCode, plain.stderr).to.equal(0);
    expect(plain.stderr).to.not.contain('warning: using the fleet repository');
  });

  it('a verb that touches hosts names the repository on its first line, whatever it then meets', async () => {
    const run = await fleet(['version', '--timeout', '500'], {
      cwd: dir.path,
      env: { FLEET_REPO: lab, FLEET_CREDENTIALS: join(dir.path, 'no-credentials.json') },
    });
    expect(run.stdout.split('\n')[0], run.stderr).to.equal(`repository ${lab}`);
    const machine = await fleet(['version', '--timeout', '500', '--json'], {
      cwd: dir.path,
      env: { FLEET_REPO: lab, FLEET_CREDENTIALS: join(dir.path, 'no-credentials.json') },
    });
    expect(() => json(machine)).to.not.throw();
  });

  it('a node path the shell expanded from ~ is read as ~/…; any other absolute path is one error everywhere', async () => {
    const env = { FLEET_REPO: lab, HOME: dir.path, FLEET_CREDENTIALS: join(dir.path, 'none.json') };
    const verbs = [
      ['config', 'export', 'node-01'],
      ['config', 'adopt', 'node-01'],
      ['config', 'install', 'node-01', 'harness-policy', '--confirm', '--file'],
    ];
    const messages = new Set<string>();
    for (const verb of verbs) {
      const run = await fleet([...verb, '/etc/fleet.conf', '--json'], { cwd: dir.path, env });
      expect(run.exitCode, `${verb.join(' ')}: ${run.stderr}`).to.equal(2);
      const { error } = json<{ error: { code: string; message: string } }>(run);
      expect(error.code).to.equal('PATH_INVALID');
      messages.add(error.message);
    }
    expect([...messages]).to.deep.equal([
      `"/etc/fleet.conf" is not a node path: node paths are ~/-relative (the node's home); quote it so the shell leaves the ~ alone: '~/…'`,
    ]);
    const mapped = await fleet(
      ['config', 'export', 'node-01', join(dir.path, '.claude/CLAUDE.md')],
      {
        cwd: dir.path,
        env,
      },
    );
    expect(mapped.stderr).to.contain(
      `note: ${join(dir.path, '.claude/CLAUDE.md')} read as ~/.claude/CLAUDE.md (the node's home)`,
    );
    expect(mapped.stderr).to.not.contain('PATH_INVALID');
  });
});
