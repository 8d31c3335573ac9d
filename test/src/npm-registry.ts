/**
 * A real npm registry on loopback for the tests that install fleet's packages the way a plugin
 * author does (docs/plugin-authoring.md, "Installing @fleet/core and @fleet/testkit"): verdaccio,
 * installed from the npm registry (it needs Node ≥ 22; `.ci/run` installs it for the whole-suite
 * run and names it in `FLEET_TEST_VERDACCIO`).
 *
 * The registry has no uplink: tests talk only to 127.0.0.1. What a plugin's `npm install` needs
 * besides fleet's own packages (typescript, mocha, zod, …) is published into it from this
 * repository's installed `node_modules` ({@link mirrorInstalled}), each at the version the
 * monorepo's lockfile installed — so the registry holds exactly what `npm ci` gave this checkout.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The environment variable naming the verdaccio executable (`…/node_modules/.bin/verdaccio`). */
export const VERDACCIO_ENV = 'FLEET_TEST_VERDACCIO';
/** The Node.js major line verdaccio 6 requires (its `engines`). */
export const VERDACCIO_NODE_MAJOR = 22;

/** Why the registry cannot run on this machine, or `undefined` when it can. */
export function verdaccioUnavailable(): string | undefined {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < VERDACCIO_NODE_MAJOR) {
    return `verdaccio needs Node.js >= ${VERDACCIO_NODE_MAJOR} (this is ${process.version}); .ci/run runs this suite on the LTS line`;
  }
  const bin = process.env[VERDACCIO_ENV];
  if (bin === undefined || bin === '' || !existsSync(bin)) {
    return `verdaccio is not installed: \`npm install --prefix ~/.cache/fleet-tools/verdaccio verdaccio@6\` and set ${VERDACCIO_ENV}=~/.cache/fleet-tools/verdaccio/node_modules/.bin/verdaccio (.ci/run does)`;
  }
  return undefined;
}

export interface NpmRegistry {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  /** A user config (`npm_config_userconfig`) that makes this registry the default and logs in to it. */
  readonly userconfig: string;
  /**
   * Environment for an npm child process, over the test's own: every inherited `npm_*` variable
   * removed (`undefined`: those `npx mocha` sets, and the machine's npm config would decide what
   * the lockfile records), this registry, empty global config, a cache of its own.
   */
  env(): Record<string, string | undefined>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited ${child.exitCode}: ${log()}`);
    try {
      if ((await fetch(new URL('-/ping', url))).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`verdaccio did not answer on ${url}: ${log()}`);
}

/** Starts verdaccio on 127.0.0.1 with its storage under `dir`, and a user logged in to it. */
export async function startVerdaccio(bin: string, dir: string): Promise<NpmRegistry> {
  await mkdir(join(dir, 'storage'), { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(dir, 'htpasswd')}`,
      '    max_users: 10',
      // No uplinks: nothing is fetched from outside; every package is published here.
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'max_body_size: 200mb',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn(
    process.execPath,
    [bin, '--config', config, '--listen', `127.0.0.1:${port}`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitForPing(url, child, () => output);
    const login = await fetch(new URL('-/user/org.couchdb.user:fleet-test', url), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'fleet-test', password: 'fleet-test-password' }),
    });
    const { token } = (await login.json()) as { token?: string };
    if (!login.ok || token === undefined) throw new Error(`verdaccio refused the test user`);
    const userconfig = join(dir, 'npmrc');
    const host = url.replace(/^http:/, '');
    await writeFile(userconfig, `registry=${url}\n${host}:_authToken=${token}\n`);
    const globalconfig = join(dir, 'npmrc-global');
    await writeFile(globalconfig, '');
    const cache = join(dir, 'npm-cache');
    return {
      url,
      userconfig,
      env: () => ({
        ...Object.fromEntries(
          Object.keys(process.env)
            .filter((key) => key.toLowerCase().startsWith('npm_'))
            .map((key) => [key, undefined]),
        ),
        npm_config_globalconfig: globalconfig,
        npm_config_userconfig: userconfig,
        npm_config_registry: url,
        npm_config_cache: cache,
        npm_config_update_notifier: 'false',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
      }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One installed package: its folder and manifest. */
interface Installed {
  readonly dir: string;
  readonly manifest: Record<string, unknown> & { name: string; version: string };
}

function readManifest(dir: string): Installed['manifest'] {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Installed['manifest'];
}

/** Node's lookup: `name` in `from/node_modules`, then each parent's. */
function resolveInstalled(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

function dependencyNames(manifest: Installed['manifest']): string[] {
  const names = new Set<string>();
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
    const deps = manifest[field];
    if (typeof deps === 'object' && deps !== null)
      for (const name of Object.keys(deps)) names.add(name);
  }
  const meta = manifest['peerDependenciesMeta'] as
    Record<string, { optional?: boolean }> | undefined;
  for (const [name, entry] of Object.entries(meta ?? {}))
    if (entry.optional === true) names.delete(name);
  return [...names];
}

/**
 * The installed packages `roots` need, transitively (dependencies, optional and required peer
 * dependencies), found from each root's folder as Node finds them; `@fleet/*` and optional
 * packages not installed here (another platform's binaries) are left out.
 */
export function installedClosure(roots: readonly { name: string; from: string }[]): Installed[] {
  const seen = new Map<string, Installed>();
  const queue = [...roots];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next.name.startsWith('@fleet/')) continue;
    const dir = resolveInstalled(next.name, next.from);
    if (dir === undefined) continue;
    const manifest = readManifest(dir);
    const key = `${manifest.name}@${manifest.version}`;
    if (seen.has(key)) continue;
    seen.set(key, { dir, manifest });
    for (const name of dependencyNames(manifest)) queue.push({ name, from: dir });
  }
  return [...seen.values()];
}

/** Publishes each installed package at its installed version, as `npm publish` would send it. */
export async function mirrorInstalled(
  registry: NpmRegistry,
  packages: readonly Installed[],
  workDir: string,
): Promise<void> {
  const token = /:_authToken=(.*)$/m.exec(await readFile(registry.userconfig, 'utf8'))?.[1];
  await mkdir(workDir, { recursive: true });
  for (const [index, { dir, manifest }] of packages.entries()) {
    const tgz = join(workDir, `${index}.tgz`);
    // npm's tarball layout: every file under `package/`; a nested node_modules is not part of it.
    await run('tar', [
      '-czf',
      tgz,
      '--exclude=./node_modules',
      '--transform=s,^\\.,package,',
      '-C',
      dir,
      '.',
    ]);
    const data = await readFile(tgz);
    const file = `${manifest.name}-${manifest.version}.tgz`;
    const body = {
      _id: manifest.name,
      name: manifest.name,
      'dist-tags': { latest: manifest.version },
      versions: {
        [manifest.version]: {
          ...manifest,
          _id: `${manifest.name}@${manifest.version}`,
          dist: {
            tarball: new URL(`${manifest.name}/-/${file}`, registry.url).href,
            shasum: createHash('sha1').update(data).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
          },
        },
      },
      _attachments: {
        [file]: {
          content_type: 'application/octet-stream',
          data: data.toString('base64'),
          length: data.length,
        },
      },
    };
    const response = await fetch(new URL(manifest.name.replace('/', '%2f'), registry.url), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token ?? ''}` },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      throw new Error(
        `publishing ${manifest.name}@${manifest.version}: ${response.status} ${await response.text()}`,
      );
    }
  }
}
