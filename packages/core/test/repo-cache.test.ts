/**
 * The parsed repo cache (`.git/fleet-cache/repo-v1.json`, core `cache/store.ts`; contract §14,
 * "means"): `loadRepo` keeps the validated fleet.yaml and hosts/*.yaml keyed by their git blob ids,
 * so an unchanged repository is not parsed again; a changed file is; a corrupt or foreign cache
 * file is ignored and rewritten; a repository outside git has no cache and loads the same.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobId, gitDirOf, readCacheFile, writeCacheFile } from '../src/cache/store.js';
import { loadRepo } from '../src/repo/load.js';

const MANIFEST = `apiVersion: fleet/v1
canonicalVersion: 1.2.0
hosts:
  alpha:
    controller: http://127.0.0.1:7701
    platform: linux
    supervisor: systemd-user
    domains: [router]
  beta:
    controller: http://127.0.0.1:7702
    platform: linux
    supervisor: systemd-user
domains:
  router: { unattended: allow }
`;

describe('repo/load: the parsed repo cache under .git/fleet-cache', () => {
  let root: string;
  let cacheFile: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-repo-cache-'));
    execFileSync('git', ['init', '-q', root]);
    await writeFile(join(root, 'fleet.yaml'), MANIFEST);
    await mkdir(join(root, 'hosts'));
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
    await writeFile(join(root, 'hosts', 'beta.yaml'), 'node_id: beta\n');
    cacheFile = join(root, '.git', 'fleet-cache', 'repo-v1.json');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const header = () =>
    JSON.parse(readFileSync(cacheFile, 'utf8').split('\n')[0] as string) as { format: string };
  const body = () =>
    readCacheFile(join(root, '.git', 'fleet-cache'), 'repo-v1.json', header().format);

  it('keys the git blob id exactly as git does', async () => {
    const bytes = await readFile(join(root, 'hosts', 'alpha.yaml'));
    const git = execFileSync('git', ['-C', root, 'hash-object', 'hosts/alpha.yaml'], {
      encoding: 'utf8',
    }).trim();
    expect(blobId(bytes)).to.equal(git);
    expect(gitDirOf(root)).to.equal(join(root, '.git'));
  });

  it('writes the validated files keyed by their blob ids, and answers from them', async () => {
    const first = await loadRepo(root);
    const manifestBlob = blobId(await readFile(join(root, 'fleet.yaml')));
    const alphaBlob = blobId(await readFile(join(root, 'hosts', 'alpha.yaml')));
    expect(body()).to.deep.include({
      manifests: { [manifestBlob]: first.manifest },
    });
    expect((body() as { hosts: Record<string, unknown> }).hosts[alphaBlob]).to.deep.equal({
      node_id: 'alpha',
    });

    // The cache is what the next load reads: an entry for the same blob id is taken as is.
    const cached = body() as { manifests: Record<string, unknown>; hosts: Record<string, unknown> };
    cached.hosts[alphaBlob] = { node_id: 'from-the-cache' };
    writeCacheFile(join(root, '.git', 'fleet-cache'), 'repo-v1.json', header().format, cached);
    const second = await loadRepo(root);
    expect(second.variables.get('alpha')).to.deep.equal({ node_id: 'from-the-cache' });
    expect(second.manifest).to.deep.equal(first.manifest);
    // Positions come from a parse on demand: still the line of the key.
    expect(second.manifestLine(['hosts', 'beta', 'platform'])).to.equal(11);
  });

  it('parses a changed file again (its blob id changed) and keeps only current entries', async () => {
    await loadRepo(root);
    const oldBlob = blobId(await readFile(join(root, 'hosts', 'alpha.yaml')));
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha-2\n');
    const repo = await loadRepo(root);
    expect(repo.variables.get('alpha')).to.deep.equal({ node_id: 'alpha-2' });
    const hosts = (body() as { hosts: Record<string, unknown> }).hosts;
    expect(hosts).to.not.have.property(oldBlob);
    expect(hosts[blobId(await readFile(join(root, 'hosts', 'alpha.yaml')))]).to.deep.equal({
      node_id: 'alpha-2',
    });
  });

  it('still reports an invalid file with its line when the valid version was cached', async () => {
    await loadRepo(root);
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\nnode_id: twice\n');
    const failure = await loadRepo(root).then(
      () => undefined,
      (error: unknown) => error as { code: string; problems: { file?: string; line?: number }[] },
    );
    expect(failure?.code).to.equal('REPO_INVALID');
    expect(failure?.problems[0]).to.include({ file: 'hosts/alpha.yaml', line: 2 });
  });

  const damaged: [title: string, bytes: (text: string) => string][] = [
    ['torn (cut in the middle)', (text) => text.slice(0, Math.floor(text.length / 2))],
    ['corrupt (its body changed)', (text) => text.replace('alpha', 'alphx')],
    ['foreign (another format)', (text) => text.replace('fleet.repo-cache/v1', 'other-tool/v7')],
    ['not JSON at all', () => '\u0000\u0001 garbage\n{'],
  ];
  for (const [title, damage] of damaged) {
    it(`ignores a cache file that is ${title}, and rewrites it`, async () => {
      const first = await loadRepo(root);
      await writeFile(cacheFile, damage(readFileSync(cacheFile, 'utf8')));
      const again = await loadRepo(root);
      expect(again.manifest).to.deep.equal(first.manifest);
      expect([...again.variables]).to.deep.equal([...first.variables]);
      expect(header().format).to.match(/^fleet\.repo-cache\/v1 /);
      expect(body()).to.have.property('hosts');
    });
  }

  it('needs no git: a repository outside a git work tree loads without a cache', async () => {
    await rm(join(root, '.git'), { recursive: true, force: true });
    const repo = await loadRepo(root);
    expect(repo.variables.get('beta')).to.deep.equal({ node_id: 'beta' });
    expect(existsSync(join(root, '.git'))).to.equal(false);
  });
});
