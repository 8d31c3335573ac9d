/**
 * `fleet version`'s pure parts (contract §11): semantic version precedence, the PATH shadowing
 * decision table, evaluation of one host's answer, report assembly and its human forms, and the
 * engine over a real repository with the node side given as a function.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareSemver, parseSemver } from '../src/semver.js';
import {
  findShadowing,
  readVersionsThrough,
  refusedProbesKey,
  runVersionReport,
  runtimeItem,
  versionHost,
  versionItems,
  versionsRequestFor,
  type VersionDesired,
} from '../src/config/version.js';
import type { ProberRuntime } from '../src/config/drift.js';
import {
  buildVersionReport,
  versionExitCode,
  versionReportSchema,
  type VersionHost,
} from '../src/report/version-report.js';
import { renderVersionHtml, renderVersionMarkdown } from '../src/report/render-version.js';
import {
  versionsResponseSchema,
  type FleetOnPath,
  type VersionsRequest,
  type VersionsResponse,
} from '../src/wire/versions.js';
import { FleetError } from '../src/errors.js';
import { loadRepo } from '../src/repo/load.js';

const SHA = 'a'.repeat(64);

function answer(overrides: Partial<VersionsResponse> = {}): VersionsResponse {
  return versionsResponseSchema.parse({
    nodeId: 'alpha',
    package: '@fleet/cli',
    version: '1.2.0',
    build: { sha256: null, commit: null },
    platform: 'linux',
    tools: [
      { name: 'node', state: 'found', path: '/usr/bin/node', version: 'v20.19.0' },
      { name: 'python3', state: 'missing' },
    ],
    fleet: [],
    collectedAt: '2026-05-01T00:00:00.000Z',
    ...overrides,
  });
}

const desired: VersionDesired = { canonicalVersion: '1.2.0', tools: ['node', 'python3'] };

describe('semver', () => {
  // [a, b, compare(a, b)]
  const table: [string, string, -1 | 0 | 1 | null][] = [
    ['1.2.0', '1.2.0', 0],
    ['1.2.0', '1.10.0', -1],
    ['2.0.0', '1.99.99', 1],
    ['1.2.3', '1.2.4', -1],
    ['1.2.0-rc.1', '1.2.0', -1],
    ['1.2.0', '1.2.0-rc.1', 1],
    ['1.2.0-alpha', '1.2.0-alpha.1', -1],
    ['1.2.0-alpha.1', '1.2.0-alpha.beta', -1],
    ['1.2.0-beta.2', '1.2.0-beta.11', -1],
    ['1.2.0-rc.1', '1.2.0-beta.11', 1],
    ['1.2.0+build.5', '1.2.0+build.9', 0],
    ['v1.2.0', '1.2.0', 0],
    ['1.2', '1.2.0', null],
    ['git version 2.39', '1.0.0', null],
  ];
  for (const [a, b, want] of table) {
    it(`compareSemver(${a}, ${b}) = ${want}`, () => {
      expect(compareSemver(a, b)).to.equal(want);
      if (want !== null) expect(compareSemver(b, a)).to.equal(want === 0 ? 0 : -want);
    });
  }

  it('parses pre-release identifiers and refuses leading zeros', () => {
    expect(parseSemver('1.2.3-rc.1+b')).to.deep.equal({
      major: 1,
      minor: 2,
      patch: 3,
      prerelease: ['rc', '1'],
    });
    expect(parseSemver('01.2.3')).to.equal(null);
  });
});

describe('PATH shadowing decision table', () => {
  const ok = (path: string, version: string | null): FleetOnPath => ({
    path,
    runnable: true,
    version,
    detail: version ?? 'fleet',
  });
  const dead = (path: string, detail = 'not executable'): FleetOnPath => ({
    path,
    runnable: false,
    version: null,
    detail,
  });
  // [case, entries, shadowing entries as [path, reason, shadows]]
  const table: [string, FleetOnPath[], [string, 'dead' | 'older', string][]][] = [
    ['none on PATH', [], []],
    ['one runnable', [ok('/a/fleet', '1.0.0')], []],
    ['one dead, nothing after it', [dead('/a/fleet')], []],
    ['two of one version', [ok('/a/fleet', '1.0.0'), ok('/b/fleet', '1.0.0')], []],
    ['earlier newer', [ok('/a/fleet', '2.0.0'), ok('/b/fleet', '1.0.0')], []],
    [
      'earlier older',
      [ok('/a/fleet', '1.0.0'), ok('/b/fleet', '2.0.0')],
      [['/a/fleet', 'older', '/b/fleet']],
    ],
    [
      'earlier dead',
      [dead('/a/fleet'), ok('/b/fleet', '1.0.0')],
      [['/a/fleet', 'dead', '/b/fleet']],
    ],
    [
      'earlier broken link',
      [dead('/a/fleet', 'broken symbolic link'), ok('/b/fleet', null)],
      [['/a/fleet', 'dead', '/b/fleet']],
    ],
    ['later dead does not matter', [ok('/a/fleet', '1.0.0'), dead('/b/fleet')], []],
    ['all dead', [dead('/a/fleet'), dead('/b/fleet')], []],
    ['unknown versions are not compared', [ok('/a/fleet', null), ok('/b/fleet', '9.0.0')], []],
    [
      'older hides the newest later one',
      [ok('/a/fleet', '1.0.0'), ok('/b/fleet', '1.5.0'), ok('/c/fleet', '2.0.0')],
      [
        ['/a/fleet', 'older', '/c/fleet'],
        ['/b/fleet', 'older', '/c/fleet'],
      ],
    ],
    [
      'dead, then older, then newer',
      [dead('/a/fleet'), ok('/b/fleet', '1.0.0'), ok('/c/fleet', '1.1.0')],
      [
        ['/a/fleet', 'dead', '/b/fleet'],
        ['/b/fleet', 'older', '/c/fleet'],
      ],
    ],
  ];
  for (const [name, entries, want] of table) {
    it(name, () => {
      expect(findShadowing(entries).map((s) => [s.path, s.reason, s.shadows])).to.deep.equal(want);
    });
  }
});

describe('version evaluation', () => {
  it('compares the runtime with canonicalVersion: current, stale when older, diverged when newer', () => {
    expect(runtimeItem(answer(), desired).state).to.equal('current');
    expect(runtimeItem(answer(), desired).detail).to.contain('development build');
    expect(runtimeItem(answer({ version: '1.1.9' }), desired).state).to.equal('stale');
    expect(runtimeItem(answer({ version: '1.2.0-rc.1' }), desired).state).to.equal('stale');
    expect(runtimeItem(answer({ version: '1.3.0' }), desired).state).to.equal('diverged');
  });

  it('checks the build against the canonical artifact when fleet.yaml names one', () => {
    const withArtifact = { ...desired, artifact: { sha256: SHA, commit: 'abc1234' } };
    const built = answer({ build: { sha256: SHA, commit: 'abc1234' } });
    expect(runtimeItem(built, withArtifact).state).to.equal('current');
    const other = answer({ build: { sha256: 'b'.repeat(64), commit: 'abc1234' } });
    expect(runtimeItem(other, withArtifact)).to.include({ state: 'diverged' });
  });

  it('reports tool versions, a missing tool, a failing tool and an unanswered one', () => {
    const items = versionItems(
      answer({
        tools: [
          { name: 'node', state: 'found', path: '/usr/bin/node', version: 'v20.19.0' },
          { name: 'python3', state: 'missing' },
          { name: 'git', state: 'failed', path: '/usr/bin/git', detail: '--version exited 1' },
        ],
      }),
      { canonicalVersion: '1.2.0', tools: ['node', 'python3', 'git', 'ruby'] },
    );
    const tools = items.filter((i) => i.kind === 'tool');
    expect(tools.map((t) => [t.name, t.state])).to.deep.equal([
      ['node', 'current'],
      ['python3', 'missing'],
      ['git', 'error'],
      ['ruby', 'error'],
    ]);
    expect(tools[0]).to.include({ version: 'v20.19.0', path: '/usr/bin/node', layer: 'version' });
  });

  it('turns shadowing into stale items, and a clean PATH into one current item', () => {
    const shadowed = versionItems(
      answer({
        fleet: [
          { path: '/a/fleet', runnable: false, version: null, detail: 'not executable' },
          { path: '/b/fleet', runnable: true, version: '1.2.0', detail: 'fleet/1.2.0' },
        ],
      }),
      desired,
    ).filter((i) => i.kind === 'shadowing');
    expect(shadowed).to.have.length(1);
    expect(shadowed[0]).to.include({ state: 'stale', path: '/a/fleet', layer: 'version' });
    const clean = versionItems(
      answer({ fleet: [{ path: '/b/fleet', runnable: true, version: '1.2.0', detail: 'x' }] }),
      desired,
    ).filter((i) => i.kind === 'shadowing');
    expect(clean.map((i) => i.state)).to.deep.equal(['current']);
  });

  it('reads launchd agents into runtime items, and has none off darwin', () => {
    const agents = versionItems(
      answer({
        platform: 'darwin',
        launchd: [
          {
            label: 'a',
            present: true,
            loaded: true,
            state: 'running',
            pid: 7,
            lastExitStatus: null,
          },
          {
            label: 'b',
            present: true,
            loaded: false,
            state: null,
            pid: null,
            lastExitStatus: null,
          },
          {
            label: 'c',
            present: true,
            loaded: true,
            state: 'not running',
            pid: null,
            lastExitStatus: 78,
          },
          {
            label: 'd',
            present: false,
            loaded: false,
            state: null,
            pid: null,
            lastExitStatus: null,
          },
        ],
      }),
      { ...desired, tools: [] },
    ).filter((i) => i.kind === 'launchd');
    expect(agents.map((i) => [i.name, i.state, i.layer])).to.deep.equal([
      ['a', 'current', 'runtime'],
      ['b', 'missing', 'runtime'],
      ['c', 'stale', 'runtime'],
    ]);
    expect(versionItems(answer(), desired).some((i) => i.kind === 'launchd')).to.equal(false);
  });

  it('reports an agent of the old label scheme as stale, naming the label that replaces it', () => {
    const legacy = versionItems(
      answer({
        platform: 'darwin',
        launchd: [
          {
            label: 'dev.fleet.schedule.drift',
            present: true,
            loaded: true,
            state: 'not running',
            pid: null,
            lastExitStatus: 0,
          },
        ],
      }),
      { ...desired, tools: [] },
    ).filter((i) => i.kind === 'launchd');
    expect(legacy.map((i) => i.state)).to.deep.equal(['stale']);
    expect(legacy[0]?.detail).to.contain('dev.fleet.report-drift');
  });

  describe('plugins fleet.yaml names (contract §10.5)', () => {
    const pin = { name: 'fleet-plugin-gitconfig', version: '0.1.0', sha256: SHA };
    const withPlugins = { ...desired, tools: [], plugins: [pin] };
    const cases: [string, VersionsResponse['plugins'], string, string | undefined][] = [
      ['the node loaded it as pinned', [pin], 'current', '0.1.0'],
      ['the node carries none', [], 'missing', undefined],
      ['a runtime that reports no plugins', undefined, 'missing', undefined],
      ['another version', [{ ...pin, version: '0.0.9' }], 'diverged', '0.0.9'],
      [
        'the same version, another tarball',
        [{ ...pin, sha256: 'b'.repeat(64) }],
        'diverged',
        '0.1.0',
      ],
    ];
    for (const [name, plugins, state, version] of cases) {
      it(`${name}: ${state}`, () => {
        const host = versionHost(
          'alpha',
          answer({ tools: [], ...(plugins ? { plugins } : {}) }),
          withPlugins,
        );
        const item = host.items.find((i) => i.kind === 'plugin');
        expect(item).to.deep.include({ name: pin.name, state, expected: '0.1.0' });
        expect(item?.version).to.equal(version);
        expect(host.status).to.equal(state === 'current' ? 'current' : 'drifted');
      });
    }

    it('a missing plugin is one line naming the plugin and what the node has', () => {
      const [item] = versionItems(answer({ tools: [], plugins: [] }), withPlugins).filter(
        (i) => i.kind === 'plugin',
      );
      expect(item?.detail).to.equal(
        `fleet.yaml names plugin fleet-plugin-gitconfig 0.1.0 (sha256 ${SHA.slice(0, 12)}), but the node carries no plugin fleet-plugin-gitconfig: upgrade it to an artifact that carries it (contract §10.5)`,
      );
      expect(
        versionExitCode(
          buildVersionReport({
            generatedAt: new Date('2026-05-01T00:00:00Z'),
            repoCommit: 'c0ffee',
            canonicalVersion: '1.2.0',
            hosts: [versionHost('alpha', answer({ tools: [], plugins: [] }), withPlugins)],
          }),
        ),
      ).to.equal(1);
    });

    it('a plugin the node carries but fleet.yaml does not name is no item', () => {
      const items = versionItems(answer({ tools: [], plugins: [pin] }), { ...desired, tools: [] });
      expect(items.filter((i) => i.kind === 'plugin')).to.deep.equal([]);
    });
  });

  it('assembles a fleet.version/v1 report with drift’s summary and exit codes', () => {
    const current = versionHost('beta', answer({ tools: [] }), { ...desired, tools: [] });
    const drifted = versionHost('alpha', answer(), desired);
    const unreachable: VersionHost = {
      host: 'gamma',
      status: 'unreachable',
      detail: 'HOST_UNREACHABLE: x',
      items: [],
    };
    expect(current.status).to.equal('current');
    expect(drifted.status).to.equal('drifted');
    const report = buildVersionReport({
      generatedAt: new Date('2026-05-01T00:00:00Z'),
      repoCommit: 'c0ffee',
      canonicalVersion: '1.2.0',
      hosts: [unreachable, current, drifted],
    });
    expect(versionReportSchema.parse(report)).to.deep.equal(report);
    expect(report.schema).to.equal('fleet.version/v1');
    expect(report.hosts.map((h) => h.host)).to.deep.equal(['alpha', 'beta', 'gamma']);
    expect(report.summary).to.deep.equal({
      hosts: 3,
      current: 1,
      drifted: 1,
      unreachable: 1,
      denied: 0,
      errors: 0,
    });
    expect(versionExitCode(report)).to.equal(5);
    expect(
      versionExitCode({
        ...report,
        hosts: [current],
        summary: { ...report.summary, hosts: 1, current: 1 },
      }),
    ).to.equal(0);
    const md = renderVersionMarkdown(report);
    expect(md).to.contain('| alpha | drifted | 1.2.0 (dev) | current | missing |');
    expect(md).to.contain('python3');
    const html = renderVersionHtml(report);
    expect(html).to.contain('<table>').and.to.contain('gamma');
  });

  it('escapes what a host says in both human forms', () => {
    const hostile = versionHost(
      'alpha',
      answer({
        tools: [{ name: 'node', state: 'found', path: '/x/node', version: '<script>\u001b[2J' }],
      }),
      { ...desired, tools: ['node'] },
    );
    const report = buildVersionReport({
      generatedAt: new Date(),
      repoCommit: 'c',
      canonicalVersion: '1.2.0',
      hosts: [hostile],
    });
    expect(renderVersionHtml(report)).to.not.contain('<script>');
    expect(renderVersionMarkdown(report)).to.not.contain('\u001b');
  });
});

describe('runVersionReport (engine)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-version-'));
    await mkdir(join(root, 'hosts'));
    const hosts = ['alpha', 'beta', 'gamma']
      .map(
        (h, i) =>
          `  ${h}:\n    controller: http://127.0.0.1:${7701 + i}\n    platform: linux\n    supervisor: lab\n    probes: { tools: [node, python3] }\n`,
      )
      .join('');
    await writeFile(
      join(root, 'fleet.yaml'),
      `apiVersion: fleet/v1\ncanonicalVersion: 1.2.0\nhosts:\n${hosts}`,
    );
    for (const h of ['alpha', 'beta', 'gamma'])
      await writeFile(join(root, 'hosts', `${h}.yaml`), `node_id: ${h}\n`);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('asks each host once with its probes.tools and goes on past an unreachable one', async () => {
    const repo = await loadRepo(root);
    const asked: [string, string[]][] = [];
    const settled: string[] = [];
    const report = await runVersionReport({
      repo,
      repoCommit: 'c0ffee',
      now: () => new Date('2026-05-01T00:00:00Z'),
      concurrency: 2,
      onHost: (host, status) => settled.push(`${host}:${status}`),
      readVersions: async (host, request) => {
        await Promise.resolve();
        asked.push([host, [...request.tools]]);
        if (host === 'gamma') throw new FleetError('HOST_UNREACHABLE', 'gamma: connection refused');
        if (host === 'beta') throw new FleetError('AUTH_INVALID', 'beta: token refused');
        return answer({ nodeId: host });
      },
    });
    expect(asked.sort()).to.deep.equal([
      ['alpha', ['node', 'python3']],
      ['beta', ['node', 'python3']],
      ['gamma', ['node', 'python3']],
    ]);
    expect(report.hosts.map((h) => [h.host, h.status])).to.deep.equal([
      ['alpha', 'drifted'],
      ['beta', 'denied'],
      ['gamma', 'unreachable'],
    ]);
    expect(settled.sort()).to.deep.equal(['alpha:drifted', 'beta:denied', 'gamma:unreachable']);
    // A refused token outranks an unreachable host and drift (contract §7).
    expect(versionExitCode(report)).to.equal(4);
  });

  it('refuses an unknown host before any request', async () => {
    const repo = await loadRepo(root);
    let asked = 0;
    const error = await runVersionReport({
      repo,
      repoCommit: 'c',
      hosts: ['nope'],
      now: () => new Date(),
      readVersions: async () => {
        await Promise.resolve();
        asked += 1;
        return answer();
      },
    }).then(
      () => undefined,
      (e: FleetError) => e,
    );
    expect(error?.code).to.equal('UNKNOWN_HOST');
    expect(asked).to.equal(0);
  });
});

describe("version: the supervisor's prober (supervision drift, contract §12)", () => {
  /** A supervisor prober's operator half: a unit's state from facts, as systemd-user.unit does. */
  const unitProber = (supervisor: string): ProberRuntime => ({
    id: `${supervisor}.unit`,
    layer: 'runtime',
    supervisor,
    prober: {
      evaluate(facts, desired) {
        const f = facts as { running: boolean; nodeIdFlag: string; boom?: boolean };
        if (f.boom) throw new Error('facts of another shape');
        const problems = [
          ...(f.running ? [] : ['the unit is not running (inactive)']),
          ...(f.nodeIdFlag === desired.variables['node_id']
            ? []
            : [`--node-id ${f.nodeIdFlag}, expected ${desired.variables['node_id']}`]),
        ];
        return [
          {
            layer: 'runtime',
            path: '~/.config/systemd/user/fleet-controller.service',
            state: problems.length > 0 ? 'stale' : 'current',
            ...(problems.length > 0 ? { detail: problems.join('; ') } : {}),
          },
        ];
      },
    },
  });
  const probers = [unitProber('systemd-user'), unitProber('windows-task')];
  const onSystemd: VersionDesired = {
    ...desired,
    supervisor: 'systemd-user',
    variables: { node_id: 'alpha' },
  };
  const ok = (facts: { [key: string]: boolean | string }) =>
    ({
      prober: 'systemd-user.unit',
      state: 'ok',
      layer: 'runtime',
      facts,
      collectedAt: '2026-05-01T00:00:00.000Z',
    }) as const;

  // [case, the node's probe answers, the supervisor items' [state, detail]]
  const table: [string, VersionsResponse['probes'], [string, string | undefined][]][] = [
    [
      'a running unit with the node id',
      [ok({ running: true, nodeIdFlag: 'alpha' })],
      [['current', undefined]],
    ],
    [
      'a disabled or stopped unit, or another --node-id',
      [ok({ running: false, nodeIdFlag: 'beta' })],
      [['stale', 'the unit is not running (inactive); --node-id beta, expected alpha']],
    ],
    [
      'a prober the node could not run',
      [{ prober: 'systemd-user.unit', state: 'error', code: 'INTERNAL', message: 'no bus' }],
      [['error', 'INTERNAL: no bus']],
    ],
    ['no answer for it', [], [['error', 'the node did not answer this prober']]],
    [
      'facts its operator half cannot evaluate',
      [ok({ boom: true })],
      [['error', 'could not evaluate its facts: facts of another shape']],
    ],
  ];
  for (const [name, probes, want] of table) {
    it(name, () => {
      const items = versionItems(answer({ probes }), onSystemd, probers, 'alpha').filter(
        (i) => i.kind === 'supervisor',
      );
      expect(items.map((i) => [i.state, i.detail])).to.deep.equal(want);
      expect(items.every((i) => i.layer === 'runtime' && i.name === 'systemd-user.unit')).to.equal(
        true,
      );
    });
  }

  it('makes the host drifted (exit 1) when its unit is stale', () => {
    const host = versionHost(
      'alpha',
      answer({ tools: [], probes: [ok({ running: false, nodeIdFlag: 'alpha' })] }),
      { ...onSystemd, tools: [] },
      probers,
    );
    expect(host.status).to.equal('drifted');
    const report = buildVersionReport({
      generatedAt: new Date('2026-05-01T00:00:00Z'),
      repoCommit: 'c',
      canonicalVersion: '1.2.0',
      hosts: [host],
    });
    expect(versionExitCode(report)).to.equal(1);
    expect(renderVersionMarkdown(report)).to.contain('| supervisor |');
  });

  it("asks only for the host's own supervisor's prober, and none of a host without one", () => {
    expect(versionsRequestFor(onSystemd, probers)).to.deep.equal({
      tools: ['node', 'python3'],
      probes: [{ prober: 'systemd-user.unit', parameters: {} }],
    });
    expect(versionsRequestFor({ ...desired, supervisor: 'lab' }, probers)).to.deep.equal({
      tools: ['node', 'python3'],
    });
    // Nothing asked, nothing reported: a lab host has no supervisor items.
    expect(
      versionItems(answer(), { ...desired, supervisor: 'lab' }, probers).some(
        (i) => i.kind === 'supervisor',
      ),
    ).to.equal(false);
  });
});

describe('version: reading through a controller client, old nodes included', () => {
  const request = {
    tools: ['node'],
    probes: [{ prober: 'systemd-user.unit', parameters: {} }],
  };
  /** A client whose node predates `probes` when `old` (its strict schema refuses the key). */
  function client(old: boolean, probeFails = false) {
    const calls: string[] = [];
    return {
      calls,
      versions: (asked: VersionsRequest) => {
        calls.push(asked.probes ? 'versions+probes' : 'versions');
        if (old && asked.probes) {
          return Promise.reject(
            new FleetError(
              'BAD_REQUEST',
              'the request body does not match the schema: (body): Unrecognized key: "probes"',
            ),
          );
        }
        return Promise.resolve(
          answer(asked.probes ? { probes: [{ ...okUnit(), state: 'ok' }] } : {}),
        );
      },
      probe: (asked: { prober: string }) => {
        calls.push(`probe ${asked.prober}`);
        return probeFails
          ? Promise.reject(new FleetError('SCOPE_DENIED', 'token lacks the scope for probe'))
          : Promise.resolve(okUnit());
      },
    };
  }
  const okUnit = () => ({
    prober: 'systemd-user.unit',
    layer: 'runtime' as const,
    facts: { running: true },
    collectedAt: '2026-05-01T00:00:00.000Z',
  });

  it('asks a current node once, probes included', async () => {
    const c = client(false);
    const got = await readVersionsThrough(c)(request);
    expect(c.calls).to.deep.equal(['versions+probes']);
    expect(got.probes?.map((p) => p.state)).to.deep.equal(['ok']);
  });

  it('asks a node that predates probes again without them, and each prober on its own', async () => {
    const c = client(true);
    const got = await readVersionsThrough(c)(request);
    expect(c.calls).to.deep.equal(['versions+probes', 'versions', 'probe systemd-user.unit']);
    expect(got.probes).to.deep.equal([{ ...okUnit(), state: 'ok' }]);
  });

  it("reports an old node's refused probe as that prober's error, the versions still stand", async () => {
    const got = await readVersionsThrough(client(true, true))(request);
    expect(got.tools.length).to.be.greaterThan(0);
    expect(got.probes).to.deep.equal([
      {
        prober: 'systemd-user.unit',
        state: 'error',
        code: 'SCOPE_DENIED',
        message: 'token lacks the scope for probe',
      },
    ]);
  });

  it('passes any other refusal through, asking nothing more', async () => {
    const c = {
      calls: 0,
      versions: () => {
        c.calls += 1;
        return Promise.reject(
          new FleetError('BAD_REQUEST', 'tools.0: must be a bare command name'),
        );
      },
      probe: () => Promise.reject(new Error('not asked')),
    };
    const error = await readVersionsThrough(c)(request).then(
      () => undefined,
      (e: FleetError) => e,
    );
    expect(error?.code).to.equal('BAD_REQUEST');
    expect(c.calls).to.equal(1);
    expect(refusedProbesKey(error)).to.equal(false);
  });
});
