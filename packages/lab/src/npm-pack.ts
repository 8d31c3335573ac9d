/**
 * `npm pack -w packages/cli` in a fleet checkout, for `fleet lab build` (build.ts): the release
 * path itself — @fleet/cli's prepack writes the build record, carries the plugins named by
 * `FLEET_RUNTIME_PLUGINS` and bundles the dependencies (docs/runtime-lifecycle.md) — with none of
 * an outer npm's settings that would change what is packed or where.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

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

/** `npm pack -w packages/cli` in `checkout` into `destination`; the tarball's path. */
export async function npmPackRuntime(
  checkout: string,
  destination: string,
  plugins: readonly string[],
) {
  const { FleetError } = await import('@fleet/core');
  const args = ['pack', '-w', 'packages/cli', '--pack-destination', destination, '--json'];
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn('npm', args, {
        cwd: checkout,
        env: npmEnv(plugins),
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: process.platform === 'win32',
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    },
  ).catch((error: unknown) => {
    throw new FleetError('ACTION_FAILED', `cannot run npm: ${(error as Error).message}`);
  });
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
