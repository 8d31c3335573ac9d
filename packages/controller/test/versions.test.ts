/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * `POST /v1/versions` (contract §11), the node half of `fleet version`: the launchctl parser on
 * fixture text, the build identity of a runtime run from a generation, and the route through
 * HTTP with a temp PATH of fake executables (shell scripts): a dead `fleet` earlier on PATH, an
 * older one, a newer one later, fake `node` and `git`, and no `python3`.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { access, chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findShadowing, versionsResponseSchema, type VersionsResponse } from '@fleet/core';
import { buildIdentityOf, generationDirOf } from '../src/build-identity.js';
import { GENERATION_SCHEMA } from '../src/generations/verify.js';
import { ExecaProcessRunner } from '../src/context.js';
import {
  collectFleetOnPath,
  collectTools,
  firstLine,
  parseLaunchctlPrint,
  pathDirectories,
  versionIn,
} from '../src/versions/collect.js';
import { startNode, type TestNode } from './support/node.js';

const fixture = (name: string) =>
  readFile(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8');

/** A `--version` that ran: its line, and the semantic version in it. */
const ran = (path: string, line: string, version: string | null) => ({
  path,
  runnable: true,
  version,
  detail: line,
});

async function script(path: string, body: string, mode = 0o755): Promise<void> {
  await writeFile(path, `#!/bin/sh\n${body}\n`, { mode });
  await chmod(path, mode);
}

describe('versions: launchctl print parser', () => {
  it('reads the service’s own state, pid and last exit status, not a nested endpoint’s', async () => {
    expect(parseLaunchctlPrint(await fixture('launchctl-print.txt'))).to.deep.equal({
      state: 'running',
      pid: 4242,
      lastExitStatus: 78,
    });
  });

  it('reads "(never exited)" as no exit status, past nested event triggers', async () => {
    expect(parseLaunchctlPrint(await fixture('launchctl-print-never.txt'))).to.deep.equal({
      state: 'not running',
      pid: null,
      lastExitStatus: null,
    });
  });

  it('reads nothing from text that is not a service', () => {
    expect(parseLaunchctlPrint('Could not find service "x" in domain for port\n')).to.deep.equal({
      state: null,
      pid: null,
      lastExitStatus: null,
    });
  });
});

describe('versions: output parsing and PATH', () => {
  it('takes the first non-empty line and the first semantic version in it', () => {
    expect(firstLine('\n  git version 2.39.5\nmore\n')).to.equal('git version 2.39.5');
    expect(versionIn('@fleet/cli/0.1.0 linux-x64 node-v20.19.0')).to.equal('0.1.0');
    expect(versionIn('fleet v1.3.0-rc.1')).to.equal('1.3.0-rc.1');
    expect(versionIn('Python 3.11')).to.equal(null);
  });

  it('splits PATH in order, skipping empty, relative and repeated entries', () => {
    expect(pathDirectories('/a::rel:/b:/a', 'linux')).to.deep.equal(['/a', '/b']);
    // Each platform’s own rule: `C:\x` is absolute on Windows, not on a POSIX system.
    expect(pathDirectories('C:\\x;;rel;C:\\y;C:\\x', 'win32')).to.deep.equal(['C:\\x', 'C:\\y']);
    expect(pathDirectories('C:\\x:/a', 'linux')).to.deep.equal(['/a']);
  });
});

describe('versions: build identity', () => {
  let root: string;
  const BUILD = 'c'.repeat(64);
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-build-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  async function generation(buildId: string, manifest: unknown): Promise<string> {
    const dir = join(root, 'runtime', 'generations', buildId);
    await mkdir(join(dir, 'package', 'bin'), { recursive: true });
    await writeFile(join(dir, 'package', 'bin', 'run.js'), '');
    if (manifest !== undefined)
      await writeFile(join(dir, 'generation.json'), JSON.stringify(manifest));
    return dir;
  }

  const manifest = (buildId: string) => ({
    schema: GENERATION_SCHEMA,
    buildId,
    treeHash: 'd'.repeat(64),
    files: 1,
    bytes: 1,
    package: { name: '@fleet/cli', version: '1.2.0' },
    commit: '9c1e0aa',
    stagedAt: '2026-05-01T00:00:00.000Z',
  });

  it('is the generation.json of the generation the script sits in, through the current pointer', async () => {
    const dir = await generation(BUILD, manifest(BUILD));
    await symlink(`generations/${BUILD}`, join(root, 'runtime', 'current'));
    expect(generationDirOf(join(dir, 'package', 'bin', 'run.js'))).to.equal(dir);
    expect(
      await buildIdentityOf(join(root, 'runtime', 'current', 'package', 'bin', 'run.js')),
    ).to.deep.equal({
      sha256: BUILD,
      commit: '9c1e0aa',
      package: { name: '@fleet/cli', version: '1.2.0' },
    });
  });

  it('is a development build outside a generation, or when the manifest is missing or names another build', async () => {
    const dev = { sha256: null, commit: null };
    expect(await buildIdentityOf(join(root, 'nowhere', 'run.js'))).to.deep.equal(dev);
    expect(await buildIdentityOf(undefined)).to.deep.equal(dev);
    const noManifest = await generation('e'.repeat(64), undefined);
    expect(await buildIdentityOf(join(noManifest, 'package', 'bin', 'run.js'))).to.deep.equal(dev);
    const other = await generation('f'.repeat(64), manifest(BUILD));
    expect(await buildIdentityOf(join(other, 'package', 'bin', 'run.js'))).to.deep.equal(dev);
    const checkout = join(root, 'checkout', 'bin');
    await mkdir(checkout, { recursive: true });
    await writeFile(join(checkout, 'run.js'), '');
    expect(await buildIdentityOf(join(checkout, 'run.js'))).to.deep.equal(dev);
  });

  it('is what a controller started in a checkout reports: a development build', async () => {
    const node = await startNode();
    try {
      const token = await node.issue(['versions:read']);
      const identity = await node.call('/v1/identity', { token });
      expect(identity.body.build).to.deep.equal({ sha256: null, commit: null });
    } finally {
      await node.dispose();
    }
  });
});

const LEGACY = 'legacy-shared-token-0123456789abcdef';

describe('versions: POST /v1/versions with a temp PATH', function () {
  this.timeout(30_000);
  let tmp: string;
  let path: string;
  let node: TestNode;
  let savedPath: string | undefined;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleet-path-'));
    const dirs = ['dead', 'broken', 'old', 'tools', 'new'].map((d) => join(tmp, d));
    for (const dir of dirs) await mkdir(dir);
    const [dead, broken, old, tools, newer] = dirs as [string, string, string, string, string];
    // A fleet without its executable bit, a dangling symlink, one that fails, an older, a newer.
    await script(join(dead, 'fleet'), 'echo "@fleet/cli/9.9.9 linux-x64 node-v20"', 0o644);
    await symlink(join(tmp, 'gone', 'fleet'), join(broken, 'fleet'));
    await script(join(old, 'fleet'), 'echo "@fleet/cli/1.0.0 linux-x64 node-v20.19.0"');
    await script(join(newer, 'fleet'), 'echo "@fleet/cli/1.3.0 linux-x64 node-v20.19.0"');
    await script(join(tools, 'node'), 'echo v20.19.0');
    // The tool sees the node's PATH and a minimal environment, never the controller's secrets.
    await script(join(tools, 'git'), 'echo "git version 2.39.5 leak=${FLEET_VERSIONS_LEAK:-none}"');
    await script(join(tools, 'where'), 'echo "$PATH"');
    await script(join(tools, 'broken-tool'), 'echo "boom" >&2; exit 3');
    // A program a read token must never make the node run: it leaves a marker when it runs.
    await script(join(tools, 'marker'), `touch ${join(tmp, 'marker-ran')}; echo v1.0.0`);
    path = dirs.join(':');
    node = await startNode({
      legacyTokenSha256: createHash('sha256').update(LEGACY).digest('hex'),
      policy: {
        domains: { fixture: {}, coupled: {} },
        versions: { tools: ['node', 'git', 'python3', 'broken-tool', 'where'], path: dirs },
      },
    });
    savedPath = process.env['PATH'];
  });
  after(async () => {
    if (savedPath !== undefined) process.env['PATH'] = savedPath;
    await node?.dispose();
    await rm(tmp, { recursive: true, force: true });
  });

  async function ask(tools: string[], token: string) {
    process.env['PATH'] = '/nowhere'; // the controller's own PATH is not the one probed
    process.env['FLEET_VERSIONS_LEAK'] = 'leaked'; // never handed to a tool
    try {
      return await node.call('/v1/versions', { token, body: { tools } });
    } finally {
      if (savedPath !== undefined) process.env['PATH'] = savedPath;
      delete process.env['FLEET_VERSIONS_LEAK'];
    }
  }

  it('resolves the tools, reports a missing one, and every fleet along PATH in order', async () => {
    const token = await node.issue(['versions:read']);
    const answer = await ask(['node', 'git', 'python3', 'broken-tool', 'where'], token);
    expect(answer.status, answer.text).to.equal(200);
    const body: VersionsResponse = versionsResponseSchema.parse(answer.body);
    expect(body).to.include({ nodeId: 'node-01', package: '@fleet/controller', platform: 'linux' });
    expect(body.build).to.deep.equal({ sha256: null, commit: null });
    expect(body.tools).to.deep.equal([
      {
        name: 'node',
        state: 'found',
        path: join(tmp, 'tools', 'node'),
        version: 'v20.19.0',
        onPath: [ran(join(tmp, 'tools', 'node'), 'v20.19.0', '20.19.0')],
      },
      {
        name: 'git',
        state: 'found',
        path: join(tmp, 'tools', 'git'),
        version: 'git version 2.39.5 leak=none',
        onPath: [ran(join(tmp, 'tools', 'git'), 'git version 2.39.5 leak=none', '2.39.5')],
      },
      { name: 'python3', state: 'missing', onPath: [] },
      {
        name: 'broken-tool',
        state: 'failed',
        path: join(tmp, 'tools', 'broken-tool'),
        detail: '--version exited 3: boom',
        onPath: [
          {
            path: join(tmp, 'tools', 'broken-tool'),
            runnable: false,
            version: null,
            detail: '--version exited 3: boom',
          },
        ],
      },
      {
        name: 'where',
        state: 'found',
        path: join(tmp, 'tools', 'where'),
        version: path,
        onPath: [ran(join(tmp, 'tools', 'where'), path, null)],
      },
    ]);
    expect(body.loginPath).to.deep.equal({
      source: 'policy',
      directories: path.split(':'),
      learnedAt: null,
      detail: 'versions.path in ~/.config/fleet/node-policy.yaml',
    });
    expect(body.fleet.map((f) => [f.path, f.runnable, f.version])).to.deep.equal([
      [join(tmp, 'dead', 'fleet'), false, null],
      [join(tmp, 'broken', 'fleet'), false, null],
      [join(tmp, 'old', 'fleet'), true, '1.0.0'],
      [join(tmp, 'new', 'fleet'), true, '1.3.0'],
    ]);
    expect(body.fleet[0]?.detail).to.equal('not executable');
    expect(body.fleet[1]?.detail).to.equal(
      `a broken symbolic link to ${join(tmp, 'gone', 'fleet')}`,
    );
    expect(body).to.not.have.property('launchd'); // linux
    // The operator's decision on this PATH: the dead, the broken and the older one all shadow.
    expect(findShadowing(body.fleet).map((s) => [s.path, s.reason])).to.deep.equal([
      [join(tmp, 'dead', 'fleet'), 'dead'],
      [join(tmp, 'broken', 'fleet'), 'dead'],
      [join(tmp, 'old', 'fleet'), 'older'],
    ]);
  });

  it('never runs a tool the node policy does not list, for versions:read or the legacy token', async () => {
    for (const token of [await node.issue(['versions:read']), LEGACY]) {
      const answer = await ask(['marker', 'node'], token);
      expect(answer.status, answer.text).to.equal(200);
      const [marker, nodeTool] = (answer.body as VersionsResponse).tools;
      expect(marker).to.deep.equal({
        name: 'marker',
        state: 'refused',
        detail:
          "not run: this node's policy does not list marker (versions.tools in ~/.config/fleet/node-policy.yaml)",
      });
      expect(nodeTool).to.include({ name: 'node', state: 'found' });
    }
    const ran = await access(join(tmp, 'marker-ran')).then(
      () => true,
      () => false,
    );
    expect(ran, 'the marker script ran').to.equal(false);
  });

  it("resolves the tools on the policy's login PATH when it names one", async () => {
    await node.setPolicy({
      domains: { fixture: {}, coupled: {} },
      versions: { tools: ['where', 'node'], path: [join(tmp, 'tools')] },
    });
    try {
      const answer = await ask(['where', 'node'], await node.issue(['versions:read']));
      const body = answer.body as VersionsResponse;
      // `where` prints the PATH it was given: the policy's, not the controller's.
      expect(body.tools[0]).to.include({ state: 'found', version: join(tmp, 'tools') });
      expect(body.fleet).to.deep.equal([]); // no fleet along that PATH
    } finally {
      await node.setPolicy({
        domains: { fixture: {}, coupled: {} },
        versions: {
          tools: ['node', 'git', 'python3', 'broken-tool', 'where'],
          path: path.split(':'),
        },
      });
    }
  });

  it('refuses a tool name that is not a bare command name, running nothing', async () => {
    const token = await node.issue(['versions:read']);
    for (const bad of ['/bin/sh', '../x', 'a b', '-rf', '$(id)']) {
      const answer = await ask([bad], token);
      expect(answer.status, bad).to.equal(400);
      expect(answer.body.error.code).to.equal('BAD_REQUEST');
    }
  });

  it("runs the supervisor's prober in the same read; a domain's prober is refused, its facts never read", async () => {
    // Even a token that could read the domain through a snapshot: this read is not that one.
    const token = await node.issue(['versions:read', 'config:read']);
    const answer = await node.call('/v1/versions', {
      token,
      body: {
        tools: [],
        probes: [
          { prober: 'supervisor.unit', parameters: {} },
          { prober: 'tools.versions', parameters: {} },
          { prober: 'fixture.facts', parameters: {} },
          { prober: 'no.such', parameters: {} },
        ],
      },
    });
    expect(answer.status, answer.text).to.equal(200);
    const body = versionsResponseSchema.parse(answer.body);
    expect(
      body.probes?.map((p) =>
        p.state === 'ok' ? [p.prober, p.state, p.facts] : [p.prober, p.code],
      ),
    ).to.deep.equal([
      ['supervisor.unit', 'ok', { running: true }],
      ['tools.versions', 'ok', { node: process.version }],
      ['fixture.facts', 'SCOPE_DENIED'],
      ['no.such', 'UNKNOWN_DOMAIN'],
    ]);
    // Without `probes` the answer carries none (what an operator of before asks and parses).
    const plain = await node.call('/v1/versions', { token, body: { tools: [] } });
    expect(plain.body).to.not.have.property('probes');
  });

  it('needs versions:read', async () => {
    const answer = await ask(['node'], await node.issue(['config:read']));
    expect(answer.status).to.equal(403);
    expect(answer.body.error.code).to.equal('SCOPE_DENIED');
  });

  it('collects through a process runner with a bounded timeout (a hanging --version)', async () => {
    const slow = join(tmp, 'slow');
    await mkdir(slow);
    await script(join(slow, 'fleet'), 'exec /bin/sleep 5');
    await script(join(slow, 'hang'), 'exec /bin/sleep 5');
    const input = {
      home: tmp,
      platform: 'linux' as const,
      path: slow,
      processes: new ExecaProcessRunner(tmp),
      timeoutMs: 300,
    };
    const [tools, fleet] = await Promise.all([
      collectTools(['hang'], input),
      collectFleetOnPath(input),
    ]);
    expect(tools[0]).to.include({ state: 'failed' });
    expect(fleet[0]).to.include({ runnable: false });
    expect(fleet[0]?.detail).to.contain('timed out');
  });
});
