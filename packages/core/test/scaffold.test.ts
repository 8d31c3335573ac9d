import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FleetError } from '../src/errors.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import { hostVariables, loadRepo, parseManifest, readRepoFile } from '../src/repo/load.js';
import { exampleManifest, scaffoldFleetRepo } from '../src/repo/scaffold.js';
import { validateRepo } from '../src/validate.js';

const run = promisify(execFile);
const git = async (dir: string, ...args: string[]): Promise<string> =>
  (await run('git', ['-C', dir, ...args])).stdout.trim();

const ROUTER: DomainDeclaration = {
  domain: 'router',
  description: 'router',
  files: [
    {
      id: 'router.yaml',
      path: '~/.config/router/router.yaml',
      pathVariable: 'router_config_path',
      canonical: 'router.yaml',
      kind: 'whole',
      format: 'yaml',
    },
  ],
  hostVariables: ['node_id', 'listen_addr', 'router_config_path'],
  coupling: { kind: 'none' },
  examples: [
    {
      path: 'router.yaml',
      content:
        'id: {{ host.node_id }}\nlisten: {{ host.listen_addr }}\nkey: {{ secret.API_KEY }}\n',
    },
  ],
};

const HARNESS: DomainDeclaration = {
  domain: 'harness',
  description: 'harness',
  files: [
    {
      id: 'AGENTS.md',
      path: '~/AGENTS.md',
      canonical: 'policy/AGENTS.md',
      kind: 'block',
      format: 'markdown',
      markers: { begin: '<!-- fleet:begin -->', end: '<!-- fleet:end -->' },
    },
  ],
  hostVariables: [],
  coupling: { kind: 'none' },
  examples: [
    { path: 'policy/AGENTS.md', content: '<!-- fleet:begin -->\nbe careful\n<!-- fleet:end -->' },
  ],
};

/** Declared, but with no example files: not enabled on the example host. */
const BARE: DomainDeclaration = {
  domain: 'bare',
  description: 'bare',
  files: [{ id: 'x', path: '~/x', canonical: 'x', kind: 'whole', format: 'text' }],
  hostVariables: [],
  coupling: { kind: 'none' },
};

const DECLARATIONS = [ROUTER, HARNESS, BARE];

describe('repo/scaffold', () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'fleet-init-'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('exampleManifest validates and enables the given domains on the example host', () => {
    const manifest = parseManifest(exampleManifest('node-07', ['router']));
    expect(manifest.hosts['node-07']?.domains).to.deep.equal(['router']);
    expect(manifest.domains).to.deep.equal({ router: { unattended: 'deny' } });
  });

  for (const [title, sub] of [
    ['a new directory (created, parents too)', 'new/deeper/repo'],
    ['an existing empty directory', 'empty'],
  ] as const) {
    it(`scaffolds ${title} with a first git commit`, async () => {
      const dir = join(base, sub);
      if (sub === 'empty') await mkdir(dir);
      const result = await scaffoldFleetRepo({ dir, domains: DECLARATIONS });
      expect(result.root).to.equal(dir);
      expect(result.files).to.deep.equal([
        '.gitignore',
        'README.md',
        'domains/harness/policy/AGENTS.md',
        'domains/router/router.yaml',
        'fleet.yaml',
        'hosts/node-01.yaml',
        'mirror/.gitkeep',
        'reports/.gitkeep',
      ]);
      expect(await git(dir, 'log', '--format=%s')).to.equal('fleet init');
      expect(await git(dir, 'rev-parse', 'HEAD')).to.equal(result.commit);
      expect(result.commit).to.match(/^[0-9a-f]{40}$/);
      expect(await git(dir, 'status', '--porcelain')).to.equal('');
      expect((await git(dir, 'ls-files')).split('\n')).to.deep.equal(result.files);
      expect(await git(dir, 'symbolic-ref', '--short', 'HEAD')).to.equal('main');
    });
  }

  it('writes every example byte-exactly and the host variables the domains need', async () => {
    const dir = join(base, 'repo');
    await scaffoldFleetRepo({ dir, domains: DECLARATIONS, exampleHost: 'lab-1' });
    expect(await readFile(join(dir, 'domains/harness/policy/AGENTS.md'), 'utf8')).to.equal(
      HARNESS.examples?.[0]?.content,
    );
    const repo = await loadRepo(dir);
    expect(Object.keys(repo.manifest.hosts)).to.deep.equal(['lab-1']);
    expect(repo.manifest.hosts['lab-1']?.domains).to.deep.equal(['router', 'harness']);
    // node_id is the host name; a path override variable is optional and left out
    expect(hostVariables(repo, 'lab-1')).to.deep.equal({
      node_id: 'lab-1',
      listen_addr: 'lab-1-listen-addr',
    });
  });

  it('the scaffolded repository loads and validates with the same declarations', async () => {
    const dir = join(base, 'repo');
    await scaffoldFleetRepo({ dir, domains: DECLARATIONS });
    const repo = await loadRepo(dir);
    const report = validateRepo({
      repo,
      domains: new Map(DECLARATIONS.map((d) => [d.domain, d])),
      readCanonical: (path) => readRepoFile(dir, path),
    });
    expect(report).to.deep.equal({ hosts: 1, domains: 2, rendered: 2, problems: [] });
  });

  it('scaffolds a repository with no example domains at all', async () => {
    const dir = join(base, 'repo');
    const result = await scaffoldFleetRepo({ dir, domains: [BARE] });
    expect(result.files).to.not.include.members(['domains/bare/x']);
    const repo = await loadRepo(dir);
    expect(repo.manifest.hosts['node-01']?.domains).to.deep.equal([]);
  });

  for (const [title, prepare] of [
    ['a file', async (dir: string) => writeFile(join(dir, 'keep.txt'), 'mine')],
    ['a hidden file', async (dir: string) => writeFile(join(dir, '.keep'), 'mine')],
    ['an empty subdirectory', async (dir: string) => mkdir(join(dir, 'sub'))],
  ] as const) {
    it(`refuses a directory holding ${title} (INIT_TARGET_NOT_EMPTY) and writes nothing`, async () => {
      const dir = join(base, 'occupied');
      await mkdir(dir);
      await prepare(dir);
      const before = await readdir(dir);
      try {
        await scaffoldFleetRepo({ dir, domains: DECLARATIONS });
        expect.fail('expected INIT_TARGET_NOT_EMPTY');
      } catch (error) {
        expect(error).to.be.instanceOf(FleetError);
        expect((error as FleetError).code).to.equal('INIT_TARGET_NOT_EMPTY');
        expect((error as FleetError).exitCode).to.equal(2);
        expect((error as Error).message).to.contain(dir);
      }
      expect(await readdir(dir)).to.deep.equal(before);
    });
  }

  it('refuses a target that is a file (INIT_TARGET_NOT_EMPTY), leaving it alone', async () => {
    const file = join(base, 'a-file');
    await writeFile(file, 'mine');
    try {
      await scaffoldFleetRepo({ dir: file, domains: DECLARATIONS });
      expect.fail('expected INIT_TARGET_NOT_EMPTY');
    } catch (error) {
      expect((error as FleetError).code).to.equal('INIT_TARGET_NOT_EMPTY');
    }
    expect(await readFile(file, 'utf8')).to.equal('mine');
  });
});
