/**
 * The drift engine over a real git repository, with the node side given as a function (the CLI
 * passes the controller client; the lab end-to-end tests exercise that path).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareAssessment, runDrift, type ReadLive } from '../src/config/drift.js';
import { planHost, plannedInstall } from '../src/config/plan.js';
import { domainRuntime } from '../src/config/domain-runtime.js';
import { wholeFileInstaller } from '../src/installers/whole-file.js';
import type { Installer } from '../src/interfaces/installer.js';
import { createGit } from '../src/git.js';
import { FleetError } from '../src/errors.js';
import { loadRepo } from '../src/repo/load.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';

const declaration: DomainDeclaration = {
  domain: 'demo',
  description: 'demo',
  files: [
    { id: 'app.conf', path: '~/.app.conf', canonical: 'app.conf', kind: 'whole', format: 'text' },
  ],
  hostVariables: ['node_id'],
  coupling: { kind: 'none' },
};

const manifest = (hosts: string[]) =>
  `apiVersion: fleet/v1\ncanonicalVersion: 1.0.0\nhosts:\n${hosts
    .map(
      (h, i) =>
        `  ${h}:\n    controller: http://127.0.0.1:${7701 + i}\n    platform: linux\n    supervisor: lab\n    domains: [demo]\n`,
    )
    .join('')}`;

describe('runDrift (engine)', () => {
  let root: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-drift-'));
    git('init', '-q', '-b', 'main');
    await mkdir(join(root, 'hosts'));
    await mkdir(join(root, 'domains', 'demo'), { recursive: true });
    await writeFile(join(root, 'fleet.yaml'), manifest(['alpha', 'beta', 'gamma', 'delta']));
    for (const h of ['alpha', 'beta', 'gamma', 'delta'])
      await writeFile(join(root, 'hosts', `${h}.yaml`), `node_id: ${h}\n`);
    await writeFile(join(root, 'domains/demo/app.conf'), 'id = {{ host.node_id }}\nport = 1\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'v1');
    await writeFile(join(root, 'domains/demo/app.conf'), 'id = {{ host.node_id }}\nport = 2\n');
    git('commit', '-q', '-am', 'v2');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('classifies every host, goes on past an unreachable one, and counts the summary', async () => {
    const live: Record<string, string | null> = {
      alpha: 'id = alpha\nport = 2\n', // current
      beta: 'id = beta\nport = 1\n', // stale: v1
      gamma: 'id = gamma\nport = 3\n', // diverged
    };
    const asked: string[] = [];
    const readLive: ReadLive = (host, targets) => {
      asked.push(`${host}:${targets.map((t) => t.path).join(',')}`);
      if (host === 'delta') {
        return Promise.reject(new FleetError('HOST_UNREACHABLE', 'delta: connection refused'));
      }
      const content = live[host];
      return Promise.resolve(
        new Map([
          [
            '~/.app.conf',
            content === null || content === undefined
              ? { kind: 'absent' as const }
              : { kind: 'present' as const, content, sha256: 'a'.repeat(64) },
          ],
        ]),
      );
    };
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive,
      now: () => new Date('2026-06-01T00:00:00Z'),
    });
    expect(report.repoCommit).to.equal(git('rev-parse', 'HEAD').trim());
    expect(report.summary).to.deep.equal({
      hosts: 4,
      current: 1,
      drifted: 2,
      unreachable: 1,
      denied: 0,
      errors: 0,
    });
    expect(
      report.hosts.map((h) => [h.host, h.status, h.items.map((i) => i.state).join()]),
    ).to.deep.equal([
      ['alpha', 'current', 'current'],
      ['beta', 'drifted', 'stale'],
      ['delta', 'unreachable', ''],
      ['gamma', 'drifted', 'diverged'],
    ]);
    expect(report.hosts.find((h) => h.host === 'delta')?.detail).to.contain('connection refused');
    expect(asked.sort()).to.deep.equal([
      'alpha:~/.app.conf',
      'beta:~/.app.conf',
      'delta:~/.app.conf',
      'gamma:~/.app.conf',
    ]);
  });

  it("counts a rendering with the host's earlier variables as published (a node-id change)", async () => {
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha-2\n');
    git('commit', '-q', '-am', 'alpha renamed');
    const readLive: ReadLive = () =>
      Promise.resolve(
        new Map([
          [
            '~/.app.conf',
            {
              kind: 'present' as const,
              content: 'id = alpha\nport = 2\n',
              sha256: 'a'.repeat(64),
            },
          ],
        ]),
      );
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive,
      hosts: ['alpha'],
      now: () => new Date(),
    });
    const [item] = report.hosts[0]?.items ?? [];
    expect(item?.state).to.equal('stale');
    expect(item?.detail).to.match(/equals the known version commit/);
  });

  it('refuses an unknown host before asking any host anything', async () => {
    let asked = 0;
    try {
      await runDrift({
        repo: await loadRepo(root),
        git: createGit(root),
        domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
        readLive: () => {
          asked += 1;
          return Promise.resolve(new Map());
        },
        hosts: ['alpha', 'nosuch'],
        now: () => new Date(),
      });
      expect.fail('expected UNKNOWN_HOST');
    } catch (error) {
      expect((error as FleetError).code).to.equal('UNKNOWN_HOST');
    }
    expect(asked).to.equal(0);
  });

  it('one function (contract §8.2): a canonical the installer refuses is an error in drift as in install', async () => {
    // An installer whose check refuses any canonical mentioning "FORBIDDEN" (as harness-policy
    // refuses a canonical that mentions a marker).
    const strict: Installer = {
      ...wholeFileInstaller('demo'),
      check: (_file, content) =>
        content.includes('FORBIDDEN') ? [{ message: 'mentions FORBIDDEN', line: 2 }] : [],
    };
    await writeFile(join(root, 'domains/demo/app.conf'), 'id = {{ host.node_id }}\nFORBIDDEN\n');
    git('commit', '-q', '-am', 'v3');
    const readLive: ReadLive = () =>
      Promise.resolve(
        new Map([
          [
            '~/.app.conf',
            { kind: 'present' as const, content: 'id = alpha\nport = 1\n', sha256: 'a'.repeat(64) },
          ],
        ]),
      );
    const domains = new Map([['demo', domainRuntime(declaration, strict)]]);
    const repo = await loadRepo(root);
    const report = await runDrift({
      repo,
      git: createGit(root),
      domains,
      readLive,
      hosts: ['alpha'],
      now: () => new Date(),
    });
    const [item] = report.hosts[0]?.items ?? [];
    expect(item?.state).to.equal('error');
    expect(item?.detail).to.contain('mentions FORBIDDEN');
    const assessment = await prepareAssessment({ repo, git: createGit(root), domains, readLive });
    const [plan] = await planHost(assessment, 'alpha', 'demo');
    expect(plan?.files[0]?.item).to.deep.equal(item);
    expect(() => plannedInstall(plan as never, { force: true }))
      .to.throw(/mentions FORBIDDEN/)
      .with.property('code', 'RENDER_FAILED');
  });
});
