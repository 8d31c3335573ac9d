/**
 * Drift's probers (contract §8.1, §14): each host's domain probers ride in the same request as its
 * files (one request per host), their items join the file items; a prober that fails is one
 * `error` item. Plus the install parameters the operator sends (derived paths, the reload command)
 * and fleet.yaml's `domains.<domain>.reload`.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDrift, type ProberRuntime, type ReadSnapshot } from '../src/config/drift.js';
import {
  RELOAD_PARAMETER,
  installParameters,
  probeParameters,
  reloadCommand,
} from '../src/config/parameters.js';
import { domainRuntime } from '../src/config/targets.js';
import { createGit } from '../src/git.js';
import { FleetError } from '../src/errors.js';
import { loadRepo, parseManifest } from '../src/repo/load.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import type { JsonValue } from '../src/interfaces/drift.js';

const declaration: DomainDeclaration = {
  domain: 'demo',
  description: 'demo',
  files: [
    { id: 'app.conf', path: '~/.app.conf', canonical: 'app.conf', kind: 'whole', format: 'text' },
  ],
  derivedPaths: [
    {
      id: 'copy',
      path: '~/.cache/app.conf',
      pathVariable: 'copy_path',
      format: 'text',
      derivedFrom: 'app.conf',
      description: 'an installed copy',
    },
  ],
  hostVariables: ['node_id', 'copy_path'],
  coupling: { kind: 'process', actions: [{ kind: 'write-copy', description: 'copy' }] },
};

const MANIFEST = `apiVersion: fleet/v1
canonicalVersion: 1.0.0
hosts:
  alpha: { controller: "http://127.0.0.1:7701", platform: linux, supervisor: lab, domains: [demo] }
  beta: { controller: "http://127.0.0.1:7702", platform: linux, supervisor: lab, domains: [demo] }
domains:
  demo: { reload: [/usr/bin/appctl, reload] }
`;

/** A prober that reports the copy stale when the node says so. */
const copyProber: ProberRuntime = {
  id: 'demo.copy',
  layer: 'derived',
  domain: 'demo',
  prober: {
    evaluate: (facts: JsonValue, desired) => {
      const same = (facts as { same?: boolean }).same === true;
      return [
        {
          layer: 'derived',
          path: (desired.parameters['paths'] as Record<string, string>)['copy'],
          state: same ? 'current' : 'stale',
          detail: same ? 'equal' : 'the copy differs from the file',
        },
      ];
    },
  },
};

describe('drift with probers', () => {
  let root: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-drift-probes-'));
    git('init', '-q', '-b', 'main');
    await mkdir(join(root, 'hosts'));
    await mkdir(join(root, 'domains', 'demo'), { recursive: true });
    await writeFile(join(root, 'fleet.yaml'), MANIFEST);
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
    await writeFile(
      join(root, 'hosts', 'beta.yaml'),
      'node_id: beta\ncopy_path: "~/other/app.conf"\n',
    );
    await writeFile(join(root, 'domains/demo/app.conf'), 'id = {{ host.node_id }}\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'v1');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("asks each host once for its files and its probers, and appends the probers' items", async () => {
    const asked: string[] = [];
    const readSnapshot: ReadSnapshot = (host, targets, probes) => {
      asked.push(
        `${host}: ${targets.map((t) => t.path).join()} + ${probes.map((p) => p.prober).join()}`,
      );
      expect(probes[0]?.parameters).to.deep.equal({
        paths: {
          'app.conf': '~/.app.conf',
          copy: host === 'beta' ? '~/other/app.conf' : '~/.cache/app.conf',
        },
      });
      return Promise.resolve({
        files: new Map([
          [
            '~/.app.conf',
            {
              kind: 'present' as const,
              content: `id = ${host}\n`,
              sha256: 'a'.repeat(64),
              backups: [],
            },
          ],
        ]),
        probes:
          host === 'alpha'
            ? [{ prober: 'demo.copy', state: 'ok' as const, facts: { same: false } }]
            : [
                {
                  prober: 'demo.copy',
                  state: 'error' as const,
                  code: 'SYMLINK_REFUSED',
                  message: 'a link',
                },
              ],
      });
    };
    const report = await runDrift({
      repo: await loadRepo(root),
      git: createGit(root),
      domains: new Map([['demo', domainRuntime(declaration, undefined)]]),
      readLive: () => Promise.reject(new FleetError('INTERNAL', 'readLive must not be used')),
      probers: [copyProber],
      readSnapshot,
      now: () => new Date('2026-06-01T00:00:00Z'),
    });
    expect(asked.sort()).to.deep.equal([
      'alpha: ~/.app.conf + demo.copy',
      'beta: ~/.app.conf + demo.copy',
    ]);
    expect(
      report.hosts.map((h) => [h.host, h.status, h.items.map((i) => `${i.layer}:${i.state}`)]),
    ).to.deep.equal([
      ['alpha', 'drifted', ['file:current', 'derived:stale']],
      ['beta', 'error', ['file:current', 'derived:error']],
    ]);
    expect(report.hosts[0]?.items[1]).to.include({ domain: 'demo', path: '~/.cache/app.conf' });
    expect(report.hosts[1]?.items[1]?.detail).to.equal('demo.copy: SYMLINK_REFUSED: a link');
  });

  it('install parameters: the host variables the domain declares, derived paths, the reload argv', async () => {
    const repo = await loadRepo(root);
    expect(installParameters(repo, 'beta', declaration)).to.deep.equal({
      node_id: 'beta',
      copy_path: '~/other/app.conf',
      'fleet.derived.copy': '~/other/app.conf',
      [RELOAD_PARAMETER]: '["/usr/bin/appctl","reload"]',
    });
    expect(reloadCommand({ [RELOAD_PARAMETER]: '["/usr/bin/appctl","reload"]' })).to.deep.equal([
      '/usr/bin/appctl',
      'reload',
    ]);
    expect(reloadCommand({})).to.equal(undefined);
    for (const bad of ['"appctl reload"', '[]', '["app ctl"]', '["a",1]', '["a\\u0000"]', 'nope']) {
      expect(() => reloadCommand({ [RELOAD_PARAMETER]: bad }), bad).to.throw(/argv array/);
    }
    expect(probeParameters(declaration, { node_id: 'alpha' }, 'alpha')).to.deep.equal({
      paths: { 'app.conf': '~/.app.conf', copy: '~/.cache/app.conf' },
    });
  });

  it('fleet.yaml refuses a reload that is a shell string, empty, or has a command with spaces', () => {
    const base = MANIFEST.replace(/ {2}demo: .*\n$/, '');
    for (const reload of [
      '"systemctl reload router && rm -rf ~"',
      '[]',
      '["systemctl reload"]',
      '["a", ""]',
    ]) {
      expect(() => parseManifest(`${base}  demo: { reload: ${reload} }\n`), reload).to.throw(
        FleetError,
      );
    }
    expect(
      parseManifest(`${base}  demo: { reload: [systemctl, --user, reload, app] }\n`).domains['demo']
        ?.reload,
    ).to.deep.equal(['systemctl', '--user', 'reload', 'app']);
  });
});
