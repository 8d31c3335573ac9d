/**
 * `npm pack -w packages/cli` in a fleet checkout, for `fleet release` and `fleet lab build`: the
 * release path itself — @fleet/cli's prepack writes the build record, carries the plugins named by
 * `FLEET_RUNTIME_PLUGINS` and bundles the dependencies (docs/runtime-lifecycle.md) — with none of
 * an outer npm's settings that would change what is packed or where.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { FleetError } from '../errors.js';
import type { FleetManifest } from '../repo/schema.js';
import { pinnedTarballPath } from './plugins.js';

/** The runtime's package: what `npm pack -w packages/cli` packs. */
export const RUNTIME_PACKAGE = '@fleet/cli';

/**
 * The @fleet/cli version of the fleet checkout at `root` (the workspace the running CLI belongs
 * to); `USAGE` when `root` is not one — a fleet installed from a tarball cannot pack itself.
 */
export async function fleetCheckoutVersion(root: string): Promise<string> {
  const notCheckout = (why: string) =>
    new FleetError(
      'USAGE',
      `fleet runs from ${root}, which is not a fleet checkout (${why}): the runtime is packed with npm pack -w packages/cli from the checkout the CLI runs from`,
    );
  let workspace: { workspaces?: unknown };
  let cli: { name?: unknown; version?: unknown };
  try {
    workspace = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as typeof workspace;
    cli = JSON.parse(
      await readFile(join(root, 'packages', 'cli', 'package.json'), 'utf8'),
    ) as typeof cli;
  } catch {
    throw notCheckout('no workspace package.json with packages/cli');
  }
  if (!Array.isArray(workspace.workspaces) || cli.name !== RUNTIME_PACKAGE) {
    throw notCheckout(`no workspace holding ${RUNTIME_PACKAGE}`);
  }
  if (!existsSync(join(root, '.git'))) throw notCheckout('not a git work tree');
  if (typeof cli.version !== 'string') throw notCheckout('packages/cli has no version');
  return cli.version;
}

/** The tarballs of the plugins fleet.yaml pins (contract §10.5), each checked against its pin. */
export async function pinnedPluginTarballs(
  repo: string,
  manifest: FleetManifest,
): Promise<string[]> {
  const files: string[] = [];
  for (const plugin of manifest.plugins) {
    const rel = pinnedTarballPath(plugin);
    let bytes: Buffer;
    try {
      bytes = await readFile(join(repo, rel));
    } catch {
      throw new FleetError(
        'ARTIFACT_PLUGINS',
        `fleet.yaml pins plugin ${plugin.name} ${plugin.version}, but ${rel} is missing: put its npm pack tarball there`,
      );
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (sha256 !== plugin.sha256) {
      throw new FleetError(
        'ARTIFACT_PLUGINS',
        `${rel} has sha256 ${sha256}, but fleet.yaml pins ${plugin.name} ${plugin.version} at ${plugin.sha256}`,
      );
    }
    files.push(join(repo, rel));
  }
  return files;
}

/** The environment for npm: none of an outer npm's settings that would change what is packed or where. */
function npmEnv(plugins: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^npm_config_(workspaces?|include_workspace_root|json|dry_run|pack_destination|ignore_scripts)$/i.test(
        key,
      )
    )
      delete env[key];
  }
  if (plugins.length > 0) env['FLEET_RUNTIME_PLUGINS'] = plugins.join(delimiter);
  else delete env['FLEET_RUNTIME_PLUGINS'];
  return env;
}

/** Runs npm (no stdin) and collects its output; `ACTION_FAILED` when it cannot be started. */
async function runNpm(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('npm', args, {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  }).catch((error: unknown) => {
    throw new FleetError('ACTION_FAILED', `cannot run npm: ${(error as Error).message}`);
  });
}

/** `npm pack -w packages/cli` in `checkout` into `destination`; the tarball's path. */
export async function npmPackRuntime(
  checkout: string,
  destination: string,
  plugins: readonly string[],
): Promise<string> {
  const args = ['pack', '-w', 'packages/cli', '--pack-destination', destination, '--json'];
  const result = await runNpm(args, checkout, npmEnv(plugins));
  // A failed prepack skips postpack: never leave its bundle where it would shadow the workspace.
  await cleanPrepackLeftovers(checkout);
  const errorLine = result.stderr
    .split('\n')
    .reverse()
    .find((line) => /error/i.test(line));
  if (result.code !== 0) {
    throw new FleetError(
      'ACTION_FAILED',
      `npm pack -w packages/cli failed in ${checkout} (exit ${String(result.code)})${errorLine ? `: ${errorLine.trim()}` : ''}`,
    );
  }
  const [report] = JSON.parse(result.stdout) as { filename?: string }[];
  if (typeof report?.filename !== 'string') {
    throw new FleetError('ACTION_FAILED', 'npm pack -w packages/cli printed no tarball name');
  }
  return join(destination, report.filename);
}

/** What @fleet/cli's prepack leaves behind when it fails half-way (each only when it made it). */
async function cleanPrepackLeftovers(checkout: string): Promise<void> {
  const cli = join(checkout, 'packages', 'cli');
  if (existsSync(join(cli, 'node_modules', '.fleet-runtime-bundle'))) {
    await rm(join(cli, 'node_modules'), { recursive: true, force: true });
  }
  if (existsSync(join(cli, 'fleet-plugins', '.fleet-runtime-plugins'))) {
    await rm(join(cli, 'fleet-plugins'), { recursive: true, force: true });
  }
  await rm(join(cli, 'fleet-build.json'), { force: true });
}

/** A plugin packed from its directory (`npm pack`): the tarball and what it says it is. */
export interface PackedPluginTarball {
  readonly file: string;
  readonly name: string;
  readonly version: string;
  readonly sha256: string;
}

/**
 * `npm pack` of the plugin package in `dir` into `destination` (its scripts not run: what is packed
 * is what the directory holds, built). `ACTION_FAILED` with npm's last error line when it fails.
 */
export async function npmPackPlugin(
  dir: string,
  destination: string,
): Promise<PackedPluginTarball> {
  const result = await runNpm(
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    dir,
    npmEnv([]),
  );
  if (result.code !== 0) {
    const line = result.stderr
      .split('\n')
      .reverse()
      .find((entry) => /error/i.test(entry));
    throw new FleetError(
      'ACTION_FAILED',
      `npm pack of the plugin in ${dir} failed (exit ${String(result.code)})${line ? `: ${line.trim()}` : ''}`,
    );
  }
  const [report] = JSON.parse(result.stdout) as {
    filename?: string;
    name?: string;
    version?: string;
  }[];
  if (
    typeof report?.filename !== 'string' ||
    typeof report.name !== 'string' ||
    typeof report.version !== 'string'
  ) {
    throw new FleetError('ACTION_FAILED', `npm pack of ${dir} printed no tarball`);
  }
  const file = join(destination, report.filename);
  const sha256 = createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
  return { file, name: report.name, version: report.version, sha256 };
}
