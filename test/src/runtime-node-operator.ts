/**
 * The operator's side of a runtime node (runtime-node.ts), for the suites that run the operator's
 * `fleet` against it (contract §11, §12): a fleet repository declaring the node and a credentials
 * file with a token the node issued, in a directory of the suite's. Apart from the node itself:
 * only the suites that drive the operator's CLI against a node need it.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_ID } from './runtime-node-expectation.js';
import type { RuntimeNode } from './runtime-node-handle.js';

/**
 * The operator's side of `node`: a fleet repository declaring it (its controller, systemd-user, no
 * domains) and a credentials file with its token, in `dir`; returns a runner of the operator's
 * `fleet` against them.
 */
export async function operatorOf(
  node: RuntimeNode,
  dir: string,
): Promise<(args: readonly string[]) => Promise<import('./fleet.js').FleetRun>> {
  const { fleet } = await import('./fleet.js');
  const repo = join(dir, 'repo');
  await mkdir(join(repo, 'hosts'), { recursive: true });
  await writeFile(join(repo, 'hosts', `${NODE_ID}.yaml`), `node_id: ${NODE_ID}\n`);
  await writeFile(
    join(repo, 'fleet.yaml'),
    [
      'apiVersion: fleet/v1',
      `canonicalVersion: ${node.artifact.version}`,
      'hosts:',
      `  ${NODE_ID}:`,
      `    controller: http://127.0.0.1:${node.port}`,
      '    platform: linux',
      '    supervisor: systemd-user',
      '    upgrade: { strategy: tarball }',
      '    domains: []',
      '',
    ].join('\n'),
  );
  execFileSync('git', ['init', '-q', repo]);
  execFileSync('git', ['-C', repo, 'add', '-A']);
  execFileSync('git', [
    '-C',
    repo,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.invalid',
    'commit',
    '-q',
    '-m',
    'init',
  ]);
  const token = await node.issueToken('operator', [
    'node-admin:bootstrap',
    'runtime:upgrade',
    'versions:read',
  ]);
  const credentials = join(dir, 'credentials.json');
  await writeFile(
    credentials,
    `${JSON.stringify({ version: 1, hosts: { [NODE_ID]: { token } } })}\n`,
    {
      mode: 0o600,
    },
  );
  return (args) =>
    fleet(args, {
      cwd: dir,
      env: { FLEET_REPO: repo, FLEET_CREDENTIALS: credentials, XDG_STATE_HOME: join(dir, 'state') },
    });
}
