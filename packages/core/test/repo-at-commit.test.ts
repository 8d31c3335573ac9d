/**
 * One source of truth: fleet.yaml and hosts/ read at HEAD (like the domains' files), and every
 * uncommitted change under fleet.yaml, hosts/ and domains/ named — never silently used.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createGit } from '../src/git.js';
import {
  loadRepoAtHead,
  parsePorcelainPaths,
  parseTreeObject,
  uncommittedWarning,
} from '../src/repo/at-commit.js';
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

  it('says nothing when everything is committed, in two git processes whatever the hosts', async () => {
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
    const head = git('rev-parse', 'HEAD').trim();
    // Every git process counted, by a `git` first on the PATH that logs and runs the real one.
    const shims = await mkdtemp(join(tmpdir(), 'fleet-git-shim-'));
    const log = join(shims, 'calls.log');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    await writeFile(
      join(shims, 'git'),
      `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`,
      { mode: 0o755 },
    );
    const path = process.env['PATH'];
    process.env['PATH'] = `${shims}:${path ?? ''}`;
    try {
      const { repo, source } = await loadRepoAtHead(root, createGit(root));
      expect(source.uncommitted).to.deep.equal([]);
      expect(source.commit).to.equal(head);
      expect(uncommittedWarning(source)).to.equal('');
      expect(hostVariables(repo, 'h19')).to.deep.equal({ node_id: 'h19' });
      const calls = (await readFile(log, 'utf8')).trim().split('\n');
      // Each call's subcommand: the first word after the `-C DIR` and `-c KEY=VALUE` options.
      const subcommands = calls.map((call) => {
        const words = call.split(' ');
        let i = 0;
        while (words[i]?.startsWith('-')) i += 2;
        return words[i];
      });
      expect(subcommands, calls.join('\n')).to.have.members(['status', 'cat-file']);
    } finally {
      process.env['PATH'] = path;
      await rm(shims, { recursive: true, force: true });
    }
  });

  it('reads other files at the same commit in the same git process, null where there is none', async () => {
    await writeFile(join(root, 'domains/demo/app.conf'), 'not committed\n');
    const { files } = await loadRepoAtHead(root, createGit(root), {
      alsoRead: ['domains/demo/app.conf', 'domains/demo/none.yaml', 'domains/demo'],
    });
    expect([...files]).to.deep.equal([
      ['domains/demo/app.conf', 'v1\n'],
      ['domains/demo/none.yaml', null],
      ['domains/demo', null],
    ]);
  });

  it('does not read a host file whose blob the parsed repo cache holds; reads a changed one', async () => {
    await loadRepoAtHead(root, createGit(root)); // fills .git/fleet-cache/repo-v1.json
    const blob = git('rev-parse', 'HEAD:hosts/alpha.yaml').trim();
    // The blob's object gone from git's store: a read of it would fail the load.
    await rm(join(root, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    const { repo } = await loadRepoAtHead(root, createGit(root));
    expect(hostVariables(repo, 'alpha')).to.deep.equal({ node_id: 'alpha' });
    // A new version of the file is another blob, not in the cache: read and parsed.
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha-2\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'v2');
    const again = await loadRepoAtHead(root, createGit(root));
    expect(hostVariables(again.repo, 'alpha')).to.deep.equal({ node_id: 'alpha-2' });
  });

  it('reads and parses every host file when the cache is foreign, and keeps them again', async () => {
    await loadRepoAtHead(root, createGit(root));
    const cacheFile = join(root, '.git', 'fleet-cache', 'repo-v1.json');
    await writeFile(cacheFile, '{"format":"other"}\n{}');
    const { repo } = await loadRepoAtHead(root, createGit(root));
    expect(hostVariables(repo, 'alpha')).to.deep.equal({ node_id: 'alpha' });
    const blob = git('rev-parse', 'HEAD:hosts/alpha.yaml').trim();
    expect(await readFile(cacheFile, 'utf8')).to.contain(`"${blob}":{"node_id":"alpha"}`);
  });

  it('reads HEAD as git resolves it: packed refs, and a linked worktree at another commit', async () => {
    const first = git('rev-parse', 'HEAD').trim();
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha-2\n');
    git('commit', '-q', '-am', 'v2');
    git('pack-refs', '--all');
    const packed = await loadRepoAtHead(root, createGit(root));
    expect(packed.source.commit).to.equal(git('rev-parse', 'HEAD').trim());
    expect(hostVariables(packed.repo, 'alpha')).to.deep.equal({ node_id: 'alpha-2' });
    const linked = await mkdtemp(join(tmpdir(), 'fleet-at-head-wt-'));
    try {
      git('worktree', 'add', '-q', '--detach', join(linked, 'wt'), first);
      const other = await loadRepoAtHead(join(linked, 'wt'), createGit(join(linked, 'wt')));
      expect(other.source.commit).to.equal(first);
      expect(hostVariables(other.repo, 'alpha')).to.deep.equal({ node_id: 'alpha' });
    } finally {
      git('worktree', 'remove', '--force', join(linked, 'wt'));
      await rm(linked, { recursive: true, force: true });
    }
  });

  it('lists hosts/ as committed: sub-directories and links are entries, dotfiles are not', async () => {
    await mkdir(join(root, 'hosts', 'nested'));
    await writeFile(join(root, 'hosts', 'nested', 'x.yaml'), 'node_id: x\n');
    await writeFile(join(root, 'hosts', '.keep'), '');
    await symlink('alpha.yaml', join(root, 'hosts', 'link.yaml'));
    git('add', '-A');
    git('commit', '-q', '-m', 'odd entries');
    const problemsOf = (load: Promise<unknown>) =>
      load.then(
        () => expect.fail('expected REPO_INVALID'),
        (error: { code: string; problems: { file: string }[] }) => {
          expect(error.code).to.equal('REPO_INVALID');
          return error.problems.map((p) => p.file);
        },
      );
    // A link is the blob of its target's name ("alpha.yaml": not a map), as git stores it.
    const atHead = await problemsOf(loadRepoAtHead(root, createGit(root)));
    expect([...new Set(atHead)]).to.deep.equal(['hosts/link.yaml', 'hosts/nested']);
  });

  it('refuses a commit whose fleet.yaml is not a file', async () => {
    git('rm', '-q', 'fleet.yaml');
    await mkdir(join(root, 'fleet.yaml'));
    await writeFile(join(root, 'fleet.yaml', 'x'), 'x\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'fleet.yaml is a directory');
    await loadRepoAtHead(root, createGit(root)).then(
      () => expect.fail('expected REPO_NOT_FOUND'),
      (error: { code: string; message: string }) => {
        expect(error.code).to.equal('REPO_NOT_FOUND');
        expect(error.message).to.match(/^no fleet\.yaml in commit [0-9a-f]{12} of /);
      },
    );
  });

  it("parses raw tree objects of SHA-1 and SHA-256 repositories, with each entry's git mode", () => {
    const entry = (mode: string, name: string, oid: Buffer) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'utf8'), oid]);
    for (const bytes of [20, 32]) {
      const a = Buffer.alloc(bytes, 0xab);
      const b = Buffer.alloc(bytes, 0x01);
      const tree = Buffer.concat([
        entry('100644', 'a.yaml', a),
        entry('120000', 'link.yaml', b),
        entry('40000', 'dir', a),
        entry('160000', 'sub', b),
        entry('100755', 'é.yaml', a),
      ]);
      expect(parseTreeObject(tree, bytes)).to.deep.equal([
        { type: 'blob', mode: '100644', name: 'a.yaml', oid: a.toString('hex') },
        { type: 'blob', mode: '120000', name: 'link.yaml', oid: b.toString('hex') },
        { type: 'tree', mode: '40000', name: 'dir', oid: a.toString('hex') },
        { type: 'commit', mode: '160000', name: 'sub', oid: b.toString('hex') },
        { type: 'blob', mode: '100755', name: 'é.yaml', oid: a.toString('hex') },
      ]);
      expect(() => parseTreeObject(tree.subarray(0, tree.length - 1), bytes)).to.throw(
        /malformed tree object/,
      );
    }
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
