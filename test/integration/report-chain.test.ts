/**
 * Scheduled reports as evidence (docs/scheduled-reports.md "Reports as evidence", issue 37): the
 * real `fleet report-run version` — what a schedule's timer runs — against a real controller on
 * 127.0.0.1, twice, after a report written by hand before the chain; `fleet schedule verify`
 * finds the chain intact, and then finds each tampering of the reports folder: a report edited, the
 * newest deleted, the kept head removed. The reports and runs.log never show as the operator's
 * changes: `fleet init` ignores them, and a repository without those lines gets them in its own
 * `.git/info/exclude` at the first run.
 */
import { expect } from 'chai';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FLEET_BIN, fleet, json, tempDir } from '../src/fleet.js';

interface Verdict {
  readonly schedule: string;
  readonly status: string;
  readonly reports: number;
  readonly beforeChain: number;
  readonly problems: readonly { kind: string; file: string; seq: number | null }[];
}
interface VerifyJson {
  readonly chains: readonly Verdict[];
  readonly headsFile: string;
}

describe('fleet schedule verify: the chain of the reports report-run writes', function () {
  // A dozen real CLI runs in a row on a loaded machine; nothing here depends on speed.
  this.timeout(120_000);
  let dir: { path: string; cleanup: () => Promise<void> };
  let repo: string;
  let env: Record<string, string>;
  let controller: ChildProcess | undefined;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });

  before(async () => {
    dir = await tempDir('fleet-report-chain-');
    repo = join(dir.path, 'fleet');
    const home = join(dir.path, 'node');
    const credentials = join(dir.path, 'credentials.json');
    env = {
      FLEET_CREDENTIALS: credentials,
      XDG_STATE_HOME: join(dir.path, 'state'),
      XDG_CONFIG_HOME: join(dir.path, 'config'),
      GIT_AUTHOR_NAME: 'op',
      GIT_AUTHOR_EMAIL: 'op@example.org',
      GIT_COMMITTER_NAME: 'op',
      GIT_COMMITTER_EMAIL: 'op@example.org',
    };
    await mkdir(home);
    const policy = await fleet(
      ['node-policy', 'init', '--home', home, '--tool', 'node', '--tool', 'git'],
      { env },
    );
    expect(policy.exitCode, policy.stderr).to.equal(0);
    const issued = await fleet(
      ['token', 'issue', '--home', home, '--client', 'op', '--scope', 'versions:read', '--json'],
      { env },
    );
    const token = json<{ token: string }>(issued).token;
    controller = spawn(
      process.execPath,
      [FLEET_BIN, 'controller', 'serve', '--home', home, '--node-id', 'node-01', '--port', '0'],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const url = await firstLine(controller);
    await writeFile(
      credentials,
      `${JSON.stringify({ version: 1, hosts: { 'node-01': { token } } })}\n`,
      { mode: 0o600 },
    );
    expect((await fleet(['init', repo], { env })).exitCode).to.equal(0);
    const manifest = join(repo, 'fleet.yaml');
    await writeFile(
      manifest,
      // supervisor none: the controller runs under no service manager here, and is current.
      (await readFile(manifest, 'utf8'))
        .replace('http://127.0.0.1:7701', url.trim())
        .replace('supervisor: systemd-user', 'supervisor: none'),
    );
    git('commit', '-q', '-am', 'node-01 at its test port');
  });
  after(async () => {
    if (controller !== undefined && controller.exitCode === null) {
      const exited = new Promise((resolve) => controller?.once('exit', resolve));
      controller.kill('SIGTERM');
      await exited;
    }
    await dir.cleanup();
  });

  const reportRun = () => fleet(['report-run', 'version', '--repo', repo], { env });
  const verify = async (...args: string[]) => {
    const run = await fleet(['schedule', 'verify', 'version', '--repo', repo, '--json', ...args], {
      env,
    });
    return { exitCode: run.exitCode, chain: json<VerifyJson>(run).chains[0] as Verdict, run };
  };
  const versionDir = async () => {
    const base = join(repo, 'reports', 'version');
    const [day] = (await readdir(base)).filter((d) => /^\d{4}-/.test(d) && d !== '2026-01-01');
    return join(base, day ?? '');
  };

  it('fleet init git-ignores what a schedule writes', () => {
    expect(git('check-ignore', '--no-index', 'reports/runs.log').trim()).to.equal(
      'reports/runs.log',
    );
    expect(
      git('check-ignore', '--no-index', 'reports/drift/2026-12-01/drift.json').trim(),
    ).to.equal('reports/drift/2026-12-01/drift.json');
  });

  it('two runs make an intact chain; a report written by hand before it is not broken', async () => {
    // A repository made before this version: no ignore lines (the first run adds them locally).
    git('rm', '-q', '.gitignore');
    git('commit', '-q', '-m', 'a repository without the ignore lines');
    const byHand = await fleet(
      ['version', '--repo', repo, '--report-dir', join(repo, 'reports', 'version', '2026-01-01')],
      { env },
    );
    expect(byHand.exitCode, `${byHand.stdout}${byHand.stderr}`).to.equal(0);

    for (const seq of [1, 2]) {
      const run = await reportRun();
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.stderr).to.contain(`report chained as seq ${seq}`);
    }
    const { exitCode, chain, run } = await verify();
    expect(exitCode, run.stdout).to.equal(0);
    expect(chain).to.include({ status: 'intact', reports: 2, beforeChain: 1 });
    const human = await fleet(['schedule', 'verify', '--repo', repo], { env });
    expect(human.stdout).to.match(
      /^version +intact {2}2 reports since \S+Z, head seq 2 \(reports\/version\/.*\/version-2\.json\); 1 before the chain$/m,
    );

    // Each run logged its report file; neither the reports nor the log are the operator's change.
    const log = (await readFile(join(repo, 'reports', 'runs.log'), 'utf8')).trim().split('\n');
    expect(log.at(-1)).to.match(/ version exit 0 \S+\/version-2\.json \(chain seq 2\)$/);
    expect(git('status', '--porcelain', '--untracked-files=all')).to.equal('');
    expect(await readFile(join(repo, '.git', 'info', 'exclude'), 'utf8')).to.contain(
      '/reports/version/\n',
    );
  });

  it('an edited report is the first broken link, named', async () => {
    const first = join(await versionDir(), 'version.json');
    const bytes = await readFile(first, 'utf8');
    await writeFile(first, bytes.replace('"current"', '"stale"').replace(/\n$/, ' \n'));
    const { exitCode, chain } = await verify();
    expect(exitCode).to.equal(6);
    expect(chain.status).to.equal('broken');
    expect(chain.problems[0]).to.deep.include({ kind: 'edited', seq: 1 });
    expect(chain.problems[0]?.file).to.match(/^reports\/version\/.*\/version\.json$/);
    await writeFile(first, bytes);
    expect((await verify()).exitCode).to.equal(0);
  });

  it('the newest report deleted is found through the kept head', async () => {
    const newest = join(await versionDir(), 'version-2.json');
    const saved = await readFile(newest);
    await unlink(newest);
    const { exitCode, chain } = await verify();
    expect(exitCode).to.equal(6);
    expect(chain.problems[0]).to.deep.include({ kind: 'missing', seq: 2 });
    await writeFile(newest, saved);
  });

  it('a missing head is flagged until accepted; the next run chains on', async () => {
    const { run } = await verify();
    const headsFile = json<VerifyJson>(run).headsFile;
    await rm(headsFile);
    const unanchored = await verify();
    expect(unanchored.exitCode).to.equal(6);
    expect(unanchored.chain.status).to.equal('unanchored');
    expect(unanchored.chain.problems[0]).to.deep.include({ kind: 'head-missing', seq: 2 });

    const accepted = await verify('--accept-current');
    expect(accepted.exitCode).to.equal(0);
    expect(accepted.chain).to.include({ status: 'intact', reports: 2 });
    expect(existsSync(headsFile)).to.equal(true);
    expect((await reportRun()).exitCode).to.equal(0);
    expect((await verify()).chain).to.include({ status: 'intact', reports: 3 });
  });
});

/** The controller's first stdout line: its bound URL, once it accepts requests. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    if (child.stdout === null) return reject(new Error('no stdout'));
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve(line));
    child.once('exit', (code) => reject(new Error(`controller exited ${code}`)));
  });
}
