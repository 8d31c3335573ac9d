/**
 * `fleet status` reads what `fleet drift` reads (contract §7, issue 35): fleet.yaml and hosts/ as
 * committed at HEAD, named on its first line, and a warning naming what the working tree has not
 * committed — a host added but not committed is not shown as if it were in the fleet.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fleet, json, tempDir } from '../src/fleet.js';

describe('fleet status: the committed fleet, as drift reads it', function () {
  this.timeout(60_000);
  let dir: { path: string; cleanup: () => Promise<void> };
  let repo: string;
  let env: Record<string, string>;
  before(async () => {
    dir = await tempDir('fleet-status-head-');
    repo = join(dir.path, 'fleet');
    const credentials = join(dir.path, 'credentials.json');
    await writeFile(credentials, '{"version":1,"hosts":{}}\n', { mode: 0o600 });
    env = {
      FLEET_CREDENTIALS: credentials,
      XDG_STATE_HOME: join(dir.path, 'state'),
      XDG_CONFIG_HOME: join(dir.path, 'config'),
    };
    expect((await fleet(['init', repo], { env })).exitCode).to.equal(0);
    // node-02 in the working tree only: declared, never committed.
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    const entry = manifest.slice(
      manifest.indexOf('  node-01:'),
      manifest.indexOf('\ndomains:\n') + 1,
    );
    await writeFile(
      join(repo, 'fleet.yaml'),
      manifest.replace(entry, entry + entry.replace('node-01', 'node-02').replace('7701', '7702')),
    );
  });
  after(() => dir.cleanup());

  const head = () =>
    execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();

  it('--json: the hosts of HEAD, its commit, and a warning naming the uncommitted fleet.yaml', async () => {
    const run = await fleet(['status', '--json', '--timeout', '500', '--repo', repo], { env });
    const report = json<{ repoCommit: string; hosts: { host: string }[] }>(run);
    expect(report.hosts.map((h) => h.host)).to.deep.equal(['node-01']);
    expect(report.repoCommit).to.equal(head());
    expect(run.stderr).to.contain(
      `warning: uncommitted changes are not used (this reads commit ${head().slice(0, 12)}): fleet.yaml`,
    );
  });

  it('human: the repository and commit on the first line, as drift names them', async () => {
    const run = await fleet(['status', '--timeout', '500', '--repo', repo], { env });
    const [first] = run.stdout.split('\n');
    expect(first).to.match(
      new RegExp(`^repository \\S+ commit ${head().slice(0, 12)} \\(HEAD\\)$`),
    );
    expect(run.stdout).to.not.contain('node-02');
    expect(run.stderr).to.contain('uncommitted changes are not used');
  });
});
