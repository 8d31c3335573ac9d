/**
 * Every verb that uses the fleet repository names it in its `--json` document as `repository`
 * (issue 17), as its human output does on the first line — run as real processes of the built CLI
 * against a repository `fleet init` made, its one host on a closed port of 127.0.0.1.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { applyDocumentSchema, driftReportSchema, versionReportSchema } from '@fleet/core';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('--json names the repository the verb used', () => {
  let dir: string;
  let repo: string;
  let env: NodeJS.ProcessEnv;
  const fleet = (args: string[]) => {
    const run = spawnSync(process.execPath, [BIN, ...args, '--repo', repo, '--json'], {
      encoding: 'utf8',
      env,
      cwd: dir,
    });
    return { status: run.status, stderr: run.stderr, json: JSON.parse(run.stdout) as unknown };
  };

  before(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'fleet-cli-repository-')));
    repo = join(dir, 'repo');
    const init = spawnSync(process.execPath, [BIN, 'init', repo], { encoding: 'utf8' });
    expect(init.status, init.stderr).to.equal(0);
    const manifest = join(repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    await writeFile(
      manifest,
      text.replace(/http:\/\/127\.0\.0\.1:\d+/, `http://127.0.0.1:${await closedPort()}`),
    );
    spawnSync('git', ['-C', repo, 'commit', '-qam', 'a closed port'], { encoding: 'utf8' });
    const credentials = join(dir, 'credentials.json');
    await writeFile(
      credentials,
      JSON.stringify({ version: 1, hosts: { 'node-01': { token: 'x'.repeat(32) } } }),
    );
    await chmod(credentials, 0o600);
    const { FLEET_REPO: _ignored, ...rest } = process.env;
    void _ignored;
    env = { ...rest, FLEET_CREDENTIALS: credentials };
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('drift, version and apply: the field first, and their documents still parse', () => {
    // The host is unreachable (exit 5); apply without --confirm is a plan (exit 2).
    const cases = [
      ['drift', driftReportSchema, 5],
      ['version', versionReportSchema, 5],
      ['apply', applyDocumentSchema, 2],
    ] as const;
    for (const [verb, schema, exit] of cases) {
      const run = fleet([verb, '--timeout', '2000']);
      expect(run.status, `${verb}: ${run.stderr}`).to.equal(exit);
      expect(Object.keys(run.json as object)[0], verb).to.equal('repository');
      expect(schema.parse(run.json).repository, verb).to.equal(repo);
    }
  });

  it('status names it too; validate keeps its own `repo` field and gains no second one', () => {
    const status = fleet(['status', '--timeout', '2000']);
    expect(status.json).to.have.property('repository', repo);
    const validate = fleet(['validate']);
    expect(validate.status, validate.stderr).to.equal(0);
    expect(validate.json).to.have.property('repo', repo);
    expect(validate.json).to.not.have.property('repository');
  });
});
