/**
 * The runtime artifact exactly as a release makes it (contract §11, §12): `npm pack -w packages/cli`,
 * whose `prepack` (scripts/bundle-runtime-deps.mjs) bundles the CLI's production dependencies, so
 * the tarball runs on its own once staged as a generation. Packed once per test process, into a
 * temporary directory removed when the process exits. Needs a built tree (`npm run build`, which
 * `npm test` runs first).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './fleet.js';

export interface RuntimeArtifact {
  /** The `.tgz`. */
  readonly path: string;
  /** Its sha256: the build id of the generation it stages as. */
  readonly sha256: string;
  /** @fleet/cli's version. */
  readonly version: string;
  readonly bytes: number;
  /**
   * The commit label its build record names (`package/fleet-build.json`, written by prepack): the
   * checkout's HEAD, `-dirty` when the tree had uncommitted changes. fleet.yaml must record it.
   */
  readonly commit: string;
}

/** The build record of an `npm pack`-shaped tarball, as `tar` reads it (`null`: none). */
export async function buildRecordOf(
  tgz: string,
): Promise<{ schema: string; commit: string; dirty: boolean } | null> {
  try {
    const { stdout } = await promisify(execFile)(
      'tar',
      ['-xzOf', tgz, 'package/fleet-build.json'],
      {
        encoding: 'utf8',
      },
    );
    return JSON.parse(stdout) as { schema: string; commit: string; dirty: boolean };
  } catch {
    return null;
  }
}

interface PackReport {
  readonly filename: string;
  readonly version: string;
  readonly entryCount: number;
  readonly bundled?: readonly string[];
}

const packed = new Map<string, Promise<RuntimeArtifact>>();

/**
 * `npm pack -w packages/cli` (once per process and plugin list; a failed pack is retried by the
 * next caller). With `plugins` (tarballs of plugins, `packedPlugin`), the artifact carries them
 * (contract §10.5): `FLEET_RUNTIME_PLUGINS`, read by the CLI's prepack, as the README's recipe.
 */
export async function packedRuntimeArtifact(
  plugins: readonly string[] = [],
): Promise<RuntimeArtifact> {
  const key = plugins.join('\n');
  let pending = packed.get(key);
  if (pending === undefined) {
    pending = pack(plugins).catch((error: unknown) => {
      packed.delete(key);
      throw error;
    });
    packed.set(key, pending);
  }
  return pending;
}

export interface PackedPlugin {
  /** The plugin's `.tgz`, as `npm pack` of its directory writes it. */
  readonly path: string;
  readonly name: string;
  readonly version: string;
  readonly sha256: string;
}

const packedPlugins = new Map<string, Promise<PackedPlugin>>();

/** `npm pack` of a plugin's directory (once per process), into a temporary directory. */
export function packedPlugin(dir: string): Promise<PackedPlugin> {
  let pending = packedPlugins.get(dir);
  if (pending === undefined) {
    pending = (async () => {
      const destination = mkdtempSync(join(tmpdir(), 'fleet-plugin-tgz-'));
      process.once('exit', () => rmSync(destination, { recursive: true, force: true }));
      const { stdout } = await promisify(execFile)(
        'npm',
        ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
        { cwd: dir, env: npmEnv(), encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      );
      const [report] = JSON.parse(stdout) as { filename: string; name: string; version: string }[];
      if (!report) throw new Error(`npm pack ${dir} printed no report`);
      const path = join(destination, report.filename);
      const sha256 = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      return { path, name: report.name, version: report.version, sha256 };
    })();
    packedPlugins.set(dir, pending);
  }
  return pending;
}

/** The environment without the outer npm's settings that would change what is packed or where. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^npm_config_(workspaces?|include_workspace_root|json|dry_run|pack_destination|ignore_scripts)$/i.test(
        key,
      )
    ) {
      delete env[key];
    }
  }
  delete env['FLEET_RUNTIME_PLUGINS'];
  return env;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024, // --json lists every file of the tarball
        shell: process.platform === 'win32' && command === 'npm',
      },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`npm pack -w packages/cli failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

async function pack(plugins: readonly string[]): Promise<RuntimeArtifact> {
  const destination = mkdtempSync(join(tmpdir(), 'fleet-artifact-'));
  process.once('exit', () => rmSync(destination, { recursive: true, force: true }));
  // Under `npm test` the outer npm's settings arrive as npm_config_*: none of these may change
  // what is packed or where (and scripts must run: prepack is what bundles the dependencies).
  const env = npmEnv();
  if (plugins.length > 0) env['FLEET_RUNTIME_PLUGINS'] = plugins.join(delimiter);
  const args = ['pack', '-w', 'packages/cli', '--pack-destination', destination, '--json'];
  // The npm running this test (npm test, npx mocha) if any, else the one on PATH.
  const npmCli = process.env['npm_execpath'];
  let stdout: string;
  try {
    stdout =
      npmCli !== undefined && /\.c?js$/.test(npmCli)
        ? await run(process.execPath, [npmCli, ...args], env)
        : await run('npm', args, env);
  } finally {
    // A failed pack skips postpack: never leave the bundle where it would shadow the workspace.
    const bundle = join(ROOT, 'packages', 'cli', 'node_modules');
    if (existsSync(join(bundle, '.fleet-runtime-bundle'))) {
      rmSync(bundle, { recursive: true, force: true });
    }
    rmSync(join(ROOT, 'packages', 'cli', 'fleet-build.json'), { force: true });
    const carried = join(ROOT, 'packages', 'cli', 'fleet-plugins');
    if (existsSync(join(carried, '.fleet-runtime-plugins'))) {
      rmSync(carried, { recursive: true, force: true });
    }
  }
  const [report] = JSON.parse(stdout) as PackReport[];
  if (!report) throw new Error(`npm pack printed no report: ${stdout.slice(0, 500)}`);
  if ((report.bundled ?? []).length === 0) {
    throw new Error('npm pack bundled no dependencies: did @fleet/cli’s prepack run?');
  }
  const path = join(destination, report.filename);
  const data = await readFile(path);
  const record = await buildRecordOf(path);
  if (record === null)
    throw new Error('npm pack wrote no build record: did @fleet/cli’s prepack run?');
  return {
    path,
    sha256: createHash('sha256').update(data).digest('hex'),
    version: report.version,
    bytes: data.length,
    commit: record.dirty ? `${record.commit}-dirty` : record.commit,
  };
}

/** The packed runtime with another version: a second real build (another sha256). */
export async function repackedArtifact(
  artifact: RuntimeArtifact,
  version: string,
  dir: string,
): Promise<{
  path: string;
  bytes: Buffer;
  pkg: { name: string; version: string };
  /** The build record is kept as it was: the commit of the artifact it was made from. */
  commit: string;
}> {
  const run = promisify(execFile);
  const work = join(dir, `repack-${version}`);
  await mkdir(work, { recursive: true });
  await run('tar', ['-xzf', artifact.path, '-C', work]);
  const pkgPath = join(work, 'package', 'package.json');
  const pkg = JSON.parse(await readFile(pkgPath, 'utf8')) as { name: string; version: string };
  pkg.version = version;
  await writeFile(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
  const path = join(dir, `fleet-${version}.tgz`);
  await run('tar', ['-czf', path, '-C', work, 'package']);
  return {
    path,
    bytes: await readFile(path),
    pkg: { name: pkg.name, version },
    commit: artifact.commit,
  };
}
