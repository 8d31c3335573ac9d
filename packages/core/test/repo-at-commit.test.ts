/**
 * One source of truth: fleet.yaml and hosts/ read at HEAD (like the domains' files), and every
 * uncommitted change under fleet.yaml, hosts/ and domains/ named — never silently used.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createGit, type Git } from '../src/git.js';
import { loadRepoAtHead, parsePorcelainPaths, uncommittedWarning } from '../src/repo/at-commit.js';
import { hostVariables, loadRepo } from '../src/repo/load.js';

const manifest = (port: number) =>
  `apiVersion: fleet/v1\ncanonicalVersion: 1.0.0\nhosts:\n  alpha:\n    controller: http://127.0.0.1:${port}\n    platform: linux\n    supervisor: lab\n    domains: [demo]\n`;

describe('loadRepoAtHead (real git)', () => {
  let root: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-at-head-'));
    git('init', '-q', '-b', 'main');
    await mkdir(join(root, 'hosts'));
    await mkdir(join(root, 'domains', 'demo'), { recursive: true });
    await writeFile(join(root, 'fleet.yaml'), manifest(7701));
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
    await writeFile(join(root, 'domains/demo/app.conf'), 'v1\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'v1');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('reads fleet.yaml and hosts/ as committed, whatever the working tree says, and names what is not committed', async () => {
    await writeFile(join(root, 'fleet.yaml'), manifest(7799));
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha-edited\n');
    await writeFile(join(root, 'domains/demo/app.conf'), 'v2, not committed\n');
    await writeFile(join(root, 'domains/demo/new.conf'), 'untracked\n');
    const { repo, source } = await loadRepoAtHead(root, createGit(root));
    expect(source.commit).to.equal(git('rev-parse', 'HEAD').trim());
    expect(repo.manifest.hosts['alpha']?.controller).to.equal('http://127.0.0.1:7701');
    expect(hostVariables(repo, 'alpha')).to.deep.equal({ node_id: 'alpha' });
    expect(source.uncommitted).to.deep.equal([
      'domains/demo/app.conf',
      'domains/demo/new.conf',
      'fleet.yaml',
      'hosts/alpha.yaml',
    ]);
    expect(uncommittedWarning(source)).to.match(
      /^warning: uncommitted changes are not used \(this reads commit [0-9a-f]{12}\): domains\/demo\/app\.conf, /,
    );
    // The working tree is what validate checks.
    expect((await loadRepo(root)).manifest.hosts['alpha']?.controller).to.equal(
      'http://127.0.0.1:7799',
    );
  });

  it('says nothing when everything is committed, in four git processes whatever the hosts', async () => {
    for (let i = 0; i < 20; i += 1) {
      await writeFile(join(root, 'hosts', `h${i}.yaml`), `node_id: h${i}\n`);
    }
    await writeFile(
      join(root, 'fleet.yaml'),
      manifest(7701) +
        Array.from(
          { length: 20 },
          (_, i) =>
            `  h${i}:\n    controller: http://127.0.0.1:${7800 + i}\n    platform: linux\n    supervisor: lab\n    domains: [demo]\n`,
        ).join(''),
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'twenty hosts');
    const real = createGit(root);
    let calls = 0;
    const counting: Git = {
      run: (args, options) => ((calls += 1), real.run(args, options)),
      runBytes: (args, options) => ((calls += 1), real.runBytes(args, options)),
    };
    const { repo, source } = await loadRepoAtHead(root, counting);
    expect(source.uncommitted).to.deep.equal([]);
    expect(uncommittedWarning(source)).to.equal('');
    expect(hostVariables(repo, 'h19')).to.deep.equal({ node_id: 'h19' });
    expect(calls).to.equal(4);
  });

  it('refuses a repository with no commit yet, and validates the committed files like the working tree', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'fleet-at-head-'));
    try {
      execFileSync('git', ['-C', fresh, 'init', '-q']);
      await writeFile(join(fresh, 'fleet.yaml'), manifest(7701));
      await loadRepoAtHead(fresh, createGit(fresh)).then(
        () => expect.fail('expected REPO_INVALID'),
        (error: { code: string; message: string }) => {
          expect(error.code).to.equal('REPO_INVALID');
          expect(error.message).to.contain('no commit yet');
        },
      );
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
    await writeFile(join(root, 'hosts', 'ghost.yaml'), 'node_id: ghost\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'a host file for no host');
    await loadRepoAtHead(root, createGit(root)).then(
      () => expect.fail('expected REPO_INVALID'),
      (error: { code: string; problems: { file: string }[] }) => {
        expect(error.code).to.equal('REPO_INVALID');
        expect(error.problems.map((p) => p.file)).to.deep.equal(['hosts/ghost.yaml']);
      },
    );
  });

  it('parses porcelain -z output, a rename with both of its paths', () => {
    expect(
      parsePorcelainPaths(' M fleet.yaml\0R  hosts/b.yaml\0hosts/a.yaml\0?? domains/x\0'),
    ).to.deep.equal(['domains/x', 'fleet.yaml', 'hosts/a.yaml', 'hosts/b.yaml']);
  });
});
