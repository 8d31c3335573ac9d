/**
 * A plugin author's first steps with fleet's packages taken from a real npm registry
 * (docs/plugin-authoring.md, "Start from fleet plugins new" and "Installing @fleet/core and
 * @fleet/testkit"): verdaccio on 127.0.0.1, into which `npm publish` puts `@fleet/core`,
 * `@fleet/controller` and `@fleet/testkit` exactly as they are in this checkout — so their
 * `files`, `exports` and dependencies are what an author installs. From empty folders outside
 * the monorepo, `fleet plugins new`, `npm install`, `npm test` and `fleet plugins link` then run
 * as a person runs them.
 *
 * The registry has no uplink; the rest of what the plugin installs (typescript, mocha, zod, …) is
 * published into it from this checkout's node_modules (test/src/npm-registry.ts). Verdaccio needs
 * Node.js ≥ 22: `.ci/run` runs this file on the LTS line; elsewhere it is pending with the reason.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { skipForEnvironment } from '@fleet/testkit';
import { FLEET_BIN, ROOT, fleet, tempDir } from '../src/fleet.js';
import {
  VERDACCIO_ENV,
  installedClosure,
  mirrorInstalled,
  startVerdaccio,
  verdaccioUnavailable,
  type NpmRegistry,
} from '../src/npm-registry.js';

const execFileAsync = promisify(execFile);
const FLEET_PACKAGES = ['core', 'controller', 'testkit'] as const;
const ISOLATED = ['FLEET_DATA_DIR', 'FLEET_CONFIG_DIR', 'FLEET_CACHE_DIR'] as const;
// What `fleet plugins new` puts in devDependencies besides fleet's own packages.
const AUTHOR_TOOLS = ['@types/chai', '@types/mocha', '@types/node', 'chai', 'mocha', 'typescript'];

interface Ran {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('e2e: a plugin built from fleet packages on an npm registry', function () {
  this.timeout(900_000); // mirroring ~90 packages, three npm installs, two labs on a shared machine
  let tmp: { path: string; cleanup: () => Promise<void> };
  let registry: NpmRegistry;
  const saved = new Map<string, string | undefined>();

  /**
   * npm's environment: the registry's, on the Node.js running this test; `npm test` runs the
   * plugin's acceptance cycle with this checkout's `fleet` ($FLEET_BIN).
   */
  function npmEnv(): Record<string, string | undefined> {
    return {
      ...registry.env(),
      PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
      FLEET_BIN,
    };
  }

  /** npm on the Node.js running this test, against the registry, in `cwd`. */
  async function npm(args: readonly string[], cwd: string): Promise<Ran> {
    try {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries({ ...process.env, ...npmEnv() })) {
        if (value !== undefined) env[key] = value;
      }
      const { stdout, stderr } = await execFileAsync('npm', [...args], {
        cwd,
        maxBuffer: 64 * 1024 * 1024,
        env,
      });
      return { exitCode: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return {
        exitCode: typeof failed.code === 'number' ? failed.code : 1,
        stdout: failed.stdout ?? '',
        stderr: failed.stderr ?? '',
      };
    }
  }

  before(async function () {
    const unavailable = verdaccioUnavailable();
    if (unavailable !== undefined) {
      skipForEnvironment(this, unavailable);
      return;
    }
    tmp = await tempDir('fleet-e2e-registry-');
    for (const name of ISOLATED) {
      saved.set(name, process.env[name]);
      process.env[name] = join(tmp.path, 'oclif', name.replace(/^FLEET_|_DIR$/g, '').toLowerCase());
    }
    registry = await startVerdaccio(process.env[VERDACCIO_ENV] ?? '', join(tmp.path, 'registry'));
    const roots = AUTHOR_TOOLS.map((name) => ({ name, from: ROOT }));
    for (const name of FLEET_PACKAGES) {
      const dir = join(ROOT, 'packages', name);
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      for (const dep of Object.keys(manifest.dependencies ?? {}))
        roots.push({ name: dep, from: dir });
    }
    await mirrorInstalled(registry, installedClosure(roots), join(tmp.path, 'mirror'));
  });
  after(async () => {
    await registry?.stop();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await tmp?.cleanup();
  });

  it('offline: the packed tarballs install with one command, and no file: path is written', async () => {
    // Before fleet's packages are on the registry: they come from `npm pack` of a checkout.
    const tarballs = join(tmp.path, 'fleet-tgz');
    await mkdir(tarballs);
    const pack = await npm(
      [
        'pack',
        ...FLEET_PACKAGES.flatMap((p) => ['-w', `packages/${p}`]),
        '--pack-destination',
        tarballs,
      ],
      ROOT,
    );
    expect(pack.exitCode, pack.stderr).to.equal(0);
    const author = join(tmp.path, 'offline');
    await mkdir(author);
    const created = await fleet(
      [
        'plugins',
        'new',
        'fleet-plugin-starship',
        '--kind',
        'whole',
        '--path',
        '~/.config/starship.toml',
        '--registry',
        registry.url,
      ],
      { cwd: author },
    );
    expect(created.exitCode, created.stderr).to.equal(0);
    const dir = join(author, 'fleet-plugin-starship');
    const manifest = await readFile(join(dir, 'package.json'), 'utf8');

    // The documented command (docs/plugin-authoring.md), with this test's tarball folder.
    const files = (await readdir(tarballs)).map((file) => join(tarballs, file));
    const install = await npm(['install', '--no-save', '--fetch-retries=0', ...files], dir);
    expect(install.exitCode, install.stderr).to.equal(0);
    expect(await readFile(join(dir, 'package.json'), 'utf8')).to.equal(manifest);
    expect(await readdir(dir)).to.not.include('package-lock.json');
    const tests = await npm(['test'], dir);
    expect(tests.exitCode, tests.stdout + tests.stderr).to.equal(0);
    expect(tests.stdout).to.match(/\b5 passing\b/); // the acceptance cycle on a lab among them
  });

  it('publishes @fleet/core, @fleet/controller and @fleet/testkit as they are', async () => {
    for (const name of FLEET_PACKAGES) {
      const published = await npm(
        ['publish', '--registry', registry.url],
        join(ROOT, 'packages', name),
      );
      expect(published.exitCode, published.stderr).to.equal(0);
    }
    const view = await npm(['view', '@fleet/testkit', 'dependencies', '--json'], tmp.path);
    expect(view.exitCode, view.stderr).to.equal(0);
    // The testkit needs only packages the registry now has.
    for (const dependency of Object.keys(JSON.parse(view.stdout) as Record<string, string>)) {
      const found = await npm(['view', dependency, 'version'], tmp.path);
      expect(found.exitCode, `${dependency}: ${found.stderr}`).to.equal(0);
    }
  });

  it('from an empty folder: plugins new, npm install, npm test, plugins link', async () => {
    const author = join(tmp.path, 'author');
    await mkdir(author);
    const created = await fleet(
      ['plugins', 'new', 'fleet-plugin-npmrc', '--kind', 'block', '--path', '~/.npmrc'],
      { cwd: author, env: { FLEET_NPM_REGISTRY: registry.url } },
    );
    expect(created.exitCode, created.stderr).to.equal(0);
    const dir = join(author, 'fleet-plugin-npmrc');
    // The @fleet scope is bound to the registry the author named, never the public default.
    expect(await readFile(join(dir, '.npmrc'), 'utf8')).to.match(
      new RegExp(`^@fleet:registry=${registry.url.replace(/[.]/g, '\\.')}$`, 'm'),
    );

    const install = await npm(['install'], dir);
    expect(install.exitCode, install.stderr).to.equal(0);
    const lock = JSON.parse(await readFile(join(dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    for (const name of ['@fleet/core', '@fleet/controller', '@fleet/testkit']) {
      expect(lock.packages[`node_modules/${name}`]?.resolved, name).to.equal(
        `${registry.url}${name}/-/${name.split('/')[1]}-0.1.0.tgz`,
      );
    }
    expect(JSON.stringify(lock)).to.not.contain('file:');

    const tests = await npm(['test'], dir);
    expect(tests.exitCode, tests.stdout + tests.stderr).to.equal(0);
    expect(tests.stdout).to.match(/\b6 passing\b/); // the acceptance cycle on a lab among them

    const link = await fleet(['plugins', 'link', '.'], {
      cwd: dir,
      env: npmEnv(),
    });
    expect(link.exitCode, link.stderr).to.equal(0);
    const plugins = await fleet(['plugins'], { cwd: dir });
    expect(plugins.stdout).to.match(/fleet-plugin-npmrc 0\.1\.0 \(link\)/);
  });
});
