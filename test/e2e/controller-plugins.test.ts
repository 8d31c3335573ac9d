/**
 * Safe plugin loading on the node (contract §2, §10.5; issue 7 item 4, issue 16): a controller
 * loads the third-party plugins its runtime carries — packed into the artifact by `npm pack -w
 * packages/cli` with FLEET_RUNTIME_PLUGINS, each verified against the artifact's build record —
 * through the same `fleet:register` hook as the CLI, so a third-party domain's node half is served,
 * and a plugin that fails to load, declares a path outside the home, collides with another
 * plugin's domain or files, targets another plugin API version, or whose files differ from its
 * pinned tarball is refused with a warning on stderr naming it. The controller still starts and
 * serves. The oclif data directory's user plugins (`fleet plugins link`) are the operator's CLI's
 * and never reach a controller.
 *
 * The runtime is the real packed artifact, unpacked into a temporary directory and run with node;
 * plugins are linked for the CLI with the real `fleet plugins link --no-install` into a temporary
 * data directory (FLEET_DATA_DIR / FLEET_CONFIG_DIR / FLEET_CACHE_DIR), never the user's own.
 */
import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createControllerClient } from '@fleet/core';
import { packedPlugin, packedRuntimeArtifact, type PackedPlugin } from '../src/artifact.js';
import { FIXTURES, FLEET_BIN, ROOT, fleet, json, tempDir } from '../src/fleet.js';

const EXAMPLE = join(ROOT, 'examples', 'fleet-plugin-gitconfig');
const BAD = [
  'fixture-broken-hook',
  'fixture-future-api',
  'fixture-missing-dependency',
  'fixture-outside-home',
  'fixture-router-clash',
  'stray-gitconfig-clash',
];

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

/**
 * Starts `fleet controller serve … --port 0 --json` of the CLI whose bin is `bin` and resolves once
 * it prints its URL.
 */
function serve(bin: string, home: string, env: Record<string, string>): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [bin, 'controller', 'serve', '--home', home, '--node-id', 'node-01', '--port', '0', '--json'],
      {
        env: {
          ...process.env,
          OCLIF_SKIP_NEW_VERSION_CHECK: 'true',
          ...env,
          NO_COLOR: '1',
          FORCE_COLOR: '0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (served) served.stderr = stderr;
    });
    let served: Served | undefined;
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => {
      const { url } = JSON.parse(line) as { url: string };
      served = { child, url, stderr, exited };
      resolve(served);
    });
    void exited.then((code) => {
      if (!served) reject(new Error(`controller exited (${code}) before serving:\n${stderr}`));
    });
  });
}

/** Unpacks the artifact into `dir`: the CLI's bin is `<dir>/package/bin/run.js`. */
async function unpack(tgz: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await promisify(execFile)('tar', ['-xzf', tgz, '-C', dir]);
  return join(dir, 'package', 'bin', 'run.js');
}

/** A node home with a policy serving `domains` and a config:read, versions:read token. */
async function nodeHome(
  home: string,
  domains: readonly string[],
  env: Record<string, string>,
): Promise<string> {
  await mkdir(home, { recursive: true });
  const policy = await fleet(
    ['node-policy', 'init', '--home', home, ...domains.flatMap((d) => ['--serve', d])],
    { env },
  );
  expect(policy.exitCode, policy.stderr).to.equal(0);
  const issued = await fleet(
    [
      'token',
      'issue',
      '--home',
      home,
      '--client',
      'test',
      '--scope',
      'config:read',
      '--scope',
      'versions:read',
      '--json',
    ],
    { env },
  );
  expect(issued.exitCode, issued.stderr).to.equal(0);
  return json<{ token: string }>(issued).token;
}

describe('controller serve loads the plugins its runtime carries, safely', function () {
  this.timeout(600_000); // packing the runtime with its plugins: about a minute on a busy machine
  let dir: { path: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  let home: string;
  let token: string;
  let example: PackedPlugin;
  let runtime: string;
  let artifactPath: string;

  before(async () => {
    dir = await tempDir('fleet-controller-plugins-');
    env = {
      FLEET_DATA_DIR: join(dir.path, 'data'),
      FLEET_CONFIG_DIR: join(dir.path, 'config'),
      FLEET_CACHE_DIR: join(dir.path, 'cache'),
    };
    home = join(dir.path, 'home');
    for (const path of [EXAMPLE, ...BAD.map((name) => join(FIXTURES, 'plugins', name))]) {
      const link = await fleet(['plugins', 'link', path, '--no-install'], { env });
      expect(link.exitCode, link.stderr).to.equal(0);
    }
    // A plugin whose directory disappeared after it was linked: oclif cannot even read it.
    const gone = join(dir.path, 'gone-plugin');
    await mkdir(gone);
    await writeFile(
      join(gone, 'package.json'),
      JSON.stringify({
        name: 'gone-plugin',
        version: '1.0.0',
        type: 'module',
        oclif: { hooks: {} },
      }),
    );
    expect((await fleet(['plugins', 'link', gone, '--no-install'], { env })).exitCode).to.equal(0);
    await rm(gone, { recursive: true });

    // The node serves the carried domain because its own policy lists it (contract §5.1).
    token = await nodeHome(
      home,
      ['router', 'transport-identity', 'harness-policy', 'gitconfig'],
      env,
    );
    example = await packedPlugin(EXAMPLE);
    const tarballs = [
      example.path,
      ...(await Promise.all(BAD.map((name) => packedPlugin(join(FIXTURES, 'plugins', name))))).map(
        (p) => p.path,
      ),
    ];
    artifactPath = (await packedRuntimeArtifact(tarballs)).path;
    runtime = await unpack(artifactPath, join(dir.path, 'runtime'));
  });
  after(() => dir.cleanup());

  it('`fleet plugins` lists the linked plugins', async () => {
    const run = await fleet(['plugins'], { env });
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/fleet-plugin-gitconfig 0\.1\.0 \(link\)/);
  });

  it('serves the carried domain and its prober, refusing each bad carried plugin on stderr', async () => {
    const served = await serve(runtime, home, env);
    try {
      const client = createControllerClient({
        host: 'node-01',
        url: served.url,
        token,
        timeoutMs: 10_000,
      });
      const identity = await client.identity();
      const domains = identity.catalog.domains.map((d) => `${d.domain} ${d.plugin}@${d.version}`);
      expect(domains).to.include('gitconfig fleet-plugin-gitconfig@0.1.0');
      expect(domains).to.include('router @fleet/plugin-router@0.1.0');
      // The catalog names the carried plugin with its pin (contract §10.5): the refused ones are
      // carried but not loaded, so not listed.
      expect(identity.catalog.plugins).to.deep.equal([
        {
          name: 'fleet-plugin-gitconfig',
          version: '0.1.0',
          sha256: example.sha256,
          domains: ['gitconfig'],
        },
      ]);
      const versions = await client.versions({ tools: [] });
      expect(versions.plugins).to.deep.equal([
        { name: 'fleet-plugin-gitconfig', version: '0.1.0', sha256: example.sha256 },
      ]);
      // Nothing of a refused plugin is served.
      expect(identity.catalog.domains.map((d) => d.domain)).to.not.include.members([
        'passwd',
        'stray-git',
      ]);

      // The node half of the third-party prober runs in the controller (real git, node home).
      const probe = await client.probe({ prober: 'gitconfig.identity', parameters: {} });
      expect(probe).to.include({ prober: 'gitconfig.identity', layer: 'derived' });

      const warnings = served.stderr.split('\n').filter((line) => line.startsWith('warning: '));
      expect(warnings).to.include(
        'warning: plugin fixture-broken-hook@1.0.0 failed to register: fixture: cannot register',
      );
      expect(warnings).to.include(
        'warning: plugin fixture-future-api@1.0.0 targets fleet plugin API 2, but this fleet provides plugin API 1',
      );
      expect(warnings).to.include(
        'warning: plugin fixture-router-clash@1.0.0 claims domain router, already owned by plugin @fleet/plugin-router@0.1.0',
      );
      expect(warnings).to.include(
        'warning: plugin stray-gitconfig-clash@1.0.0 claims path ~/.gitconfig, already owned by plugin fleet-plugin-gitconfig@0.1.0',
      );
      expect(warnings.find((w) => w.includes('fixture-outside-home@1.0.0'))).to.match(
        /invalid registration: .*files\[0\]\.path: must be a ~\/-relative path inside the node home/,
      );
      expect(warnings.find((w) => w.includes('fixture-missing-dependency@1.0.0'))).to.match(
        /failed to register: .*fleet-fixture-dependency-that-is-not-installed/,
      );
      expect(warnings).to.have.length(6);
      // The data directory's linked plugins are not the node's: the one that is gone is not read.
      expect(served.stderr).to.not.contain('gone-plugin');
    } finally {
      served.child.kill('SIGTERM');
      expect(await served.exited).to.equal(0);
    }
  });

  it('refuses a carried plugin whose files differ from its pinned tarball, and serves on', async () => {
    const tampered = await unpack(artifactPath, join(dir.path, 'tampered'));
    await appendFile(
      join(
        dir.path,
        'tampered',
        'package',
        'fleet-plugins',
        'packages',
        'fleet-plugin-gitconfig',
        'dist',
        'src',
        'register.js',
      ),
      '\n// changed after packing\n',
    );
    const other = join(dir.path, 'home-tampered');
    const otherToken = await nodeHome(other, ['router'], env);
    const served = await serve(tampered, other, env);
    try {
      const client = createControllerClient({
        host: 'node-01',
        url: served.url,
        token: otherToken,
        timeoutMs: 10_000,
      });
      const identity = await client.identity();
      expect(identity.catalog.domains.map((d) => d.domain)).to.not.include('gitconfig');
      // Without it, the clashing fixture it refused before has the path to itself.
      expect(identity.catalog.plugins?.map((p) => p.name)).to.deep.equal(['stray-gitconfig-clash']);
      expect(served.stderr).to.contain(
        `warning: plugin fleet-plugin-gitconfig@0.1.0 is refused: the generation's build record pins sha256 ${example.sha256}, but fleet-plugins/packages/fleet-plugin-gitconfig/dist/src/register.js differs from its tarball`,
      );
    } finally {
      served.child.kill('SIGTERM');
      expect(await served.exited).to.equal(0);
    }
  });

  it("an unpacked CLI serves its bundled plugins only: the data directory's linked ones are the operator's", async () => {
    const other = join(dir.path, 'home-workspace');
    const otherToken = await nodeHome(other, ['router'], env);
    const served = await serve(FLEET_BIN, other, env); // the same linked plugins in its environment
    try {
      const client = createControllerClient({
        host: 'node-01',
        url: served.url,
        token: otherToken,
        timeoutMs: 10_000,
      });
      const identity = await client.identity();
      const plugins = new Set(identity.catalog.domains.map((d) => d.plugin));
      expect([...plugins].every((name) => name.startsWith('@fleet/'))).to.equal(true);
      expect(identity.catalog.plugins).to.deep.equal([]);
      expect(
        served.stderr.split('\n').filter((line) => line.startsWith('warning: ')),
      ).to.deep.equal([]);
    } finally {
      served.child.kill('SIGTERM');
      expect(await served.exited).to.equal(0);
    }
  });

  it('the CLI refuses the same plugins the same way and goes on', async () => {
    const repo = join(dir.path, 'repo');
    expect((await fleet(['init', repo], { env })).exitCode).to.equal(0);
    const run = await fleet(['validate', '--repo', repo, '--json'], { env });
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(json(run)['valid']).to.equal(true);
    expect(run.stderr.split('\n').filter((line) => line.startsWith('warning: '))).to.have.length(6);
  });
});
