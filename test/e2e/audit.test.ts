/**
 * `fleet audit show|verify` through the real binary on a lab fleet (contract §5, §7, §15; issue 3
 * item 5, issue 11; catalogue C27, E38; docs/audit-log.md): an install is audited on the node and
 * in the operator's own log under one operation id; `audit verify` finds an edited, removed or
 * reordered entry of a node's log — through the controller and with `--home` — and exits 6 naming
 * the host and the seq; a log rewritten behind the operator's back (consistent, restarted) is
 * caught against the heads the operator kept; `--home --repair` seals a broken log aside; an
 * unreachable host is exit 5; control characters a tampered log holds print escaped.
 *
 * A node's log is tampered with while its controller is stopped (a running controller notices a
 * changed file before its next append and stops writing), and put back the same way.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type LabDocument } from '@fleet/core';
import { labSupervisorClient } from '@fleet/lab';
import { destroyLab, fleet, json, tempDir, type FleetRun } from '../src/fleet.js';

interface Verdict {
  host: string;
  status: string;
  ok: boolean;
  records: number;
  head: { seq: number; sha256: string } | null;
  problems: {
    seq: number | null;
    line: number;
    kind: string;
    message: string;
    segment?: string;
    segmentLine?: number;
  }[];
  error?: { code: string; exitCode: number };
}
interface VerifyJson {
  schema: string;
  hosts: Verdict[];
  repair?: { repaired: boolean; sealedInto: string | null; detail: string };
}
interface ShowJson {
  schema: string;
  source: { kind: string; path?: string; home?: string; hosts?: string[] };
  records: Record<string, unknown>[];
}

const ESC = '\u001b';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('fleet audit show|verify on a lab', function () {
  this.timeout(240_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let dir: string;
  let lab: LabDocument;
  let env: Record<string, string>;
  /** node-01's log and head file as its controller left them when stopped. */
  let original: string;
  let originalHead: string;
  /** The install's receipt (`--json`), and the lab repository's HEAD it was rendered from. */
  let receipt: Record<string, unknown>;
  let head: string;

  const home = (host: string) => lab.hosts.find((h) => h.name === host)?.home as string;
  const stateDir = (host: string) => join(home(host), '.local', 'state', 'fleet');
  const logPath = (host: string) => join(stateDir(host), 'audit.jsonl');
  const headPath = (host: string) => join(stateDir(host), 'audit.head.json');
  const run = (args: string[]): Promise<FleetRun> => fleet(args, { cwd: tmp.path, env });
  const lines = () => original.trimEnd().split('\n');
  const records = () => lines().map((line) => JSON.parse(line) as Record<string, unknown>);
  /** The seq of node-01's install record (reads around it are audited too). */
  const installSeq = () => records().find((r) => r['operation'] === 'install')?.['seq'] as number;
  const supervisor = (host: string) =>
    labSupervisorClient(join(dir, 'nodes', host, 'supervisor.sock'));
  /** The heads this operator kept: forgotten when a test changes a log on purpose. */
  const forgetHeads = () =>
    rm(join(env['XDG_STATE_HOME'] as string, 'fleet', 'audit-heads'), {
      recursive: true,
      force: true,
    });

  /** Runs `change` with node-01's controller stopped (its log flushed, its head recorded). */
  async function whileStopped(host: string, change: () => Promise<void>): Promise<void> {
    await supervisor(host).stop();
    try {
      await change();
    } finally {
      await supervisor(host).restart();
    }
  }
  const tamper = (edited: string[]) =>
    whileStopped('node-01', async () => {
      await forgetHeads();
      await writeFile(logPath('node-01'), `${edited.join('\n')}\n`);
    });

  async function verify(args: string[], exitCode: number): Promise<VerifyJson> {
    const result = await run(['audit', 'verify', ...args, '--json']);
    expect(result.exitCode, result.stdout + result.stderr).to.equal(exitCode);
    const document = json<VerifyJson>(result);
    expect(document.schema).to.equal('fleet.audit-verify/v1');
    return document;
  }

  /** Through the controllers (every host) and with --home: the same verdict for node-01. */
  async function expectBroken(kind: string, seq: number): Promise<void> {
    const all = await verify([], 6);
    const [node01, node02] = all.hosts;
    expect(node01).to.include({ host: 'node-01', ok: false, status: 'broken' });
    expect(node01?.problems[0]).to.include({ kind, seq });
    expect(node02).to.include({ host: 'node-02', ok: true, status: 'intact' });
    const human = await run(['audit', 'verify', '--host', 'node-01']);
    expect(human.exitCode).to.equal(6);
    expect(human.stdout).to.match(new RegExp(`node-01: ${kind} at seq ${seq}\\b`));
    const local = await verify(['--home', home('node-01')], 6);
    expect(local.hosts[0]?.problems[0]).to.include({ kind, seq, segment: 'audit.jsonl' });
  }

  before(async () => {
    tmp = await tempDir('fleet-audit-');
    dir = join(tmp.path, 'lab');
    const up = await fleet(['lab', 'up', '--hosts', '2', '--dir', dir, '--json'], {
      cwd: tmp.path,
    });
    expect(up.exitCode, up.stderr).to.equal(0);
    lab = json<LabDocument>(up);
    const stateHome = join(tmp.path, 'operator-state');
    await mkdir(stateHome, { recursive: true });
    env = {
      FLEET_REPO: lab.repo,
      FLEET_CREDENTIALS: lab.credentials,
      XDG_STATE_HOME: stateHome,
    };
    const install = await run([
      'config',
      'install',
      'node-01',
      'harness-policy',
      '--confirm',
      '--json',
    ]);
    expect(install.exitCode, install.stderr).to.equal(0);
    receipt = json<{ receipt: Record<string, unknown> }>(install).receipt;
    head = (
      await promisify(execFile)('git', ['rev-parse', 'HEAD'], { cwd: lab.repo })
    ).stdout.trim();
    // Two refusals after it: audited too, so the install is not the last line (an edit of the
    // last line needs a head to be seen).
    for (const path of ['~/.ssh/id_rsa', '~/.ssh/config']) {
      const refused = await run(['config', 'export', 'node-01', path]);
      expect(refused.exitCode).to.equal(7);
    }
    await whileStopped('node-01', async () => {
      original = await readFile(logPath('node-01'), 'utf8');
      originalHead = await readFile(headPath('node-01'), 'utf8');
    });
  });
  afterEach(async () => {
    await whileStopped('node-01', async () => {
      await writeFile(logPath('node-01'), original);
      await writeFile(headPath('node-01'), originalHead);
      await forgetHeads();
    });
  });
  after(async () => {
    if (dir) await destroyLab(dir);
    await tmp?.cleanup();
  });

  it('verifies every host of fleet.yaml: intact logs exit 0', async () => {
    const count = lines().length;
    expect(records().map((r) => r['operation'])).to.include.members(['install', 'export']);
    const document = await verify([], 0);
    expect(document.hosts.map((h) => [h.host, h.ok, h.problems.length])).to.deep.equal([
      ['node-01', true, 0],
      ['node-02', true, 0],
    ]);
    expect(document.hosts[0]?.records).to.equal(count);
    expect(document.hosts[0]?.head?.seq).to.equal(count);
    const human = await run(['audit', 'verify']);
    expect(human.exitCode, human.stderr).to.equal(0);
    expect(human.stdout).to.match(/node-01\s+intact\s+\d+ records/);
    await verify(['--home', home('node-01')], 0);
  });

  it('an edited line (a path changed): exit 6, naming node-01, the seq and "edited"', async () => {
    const edited = lines();
    const at = installSeq() - 1;
    expect(edited[at]).to.contain('"~/.claude/CLAUDE.md"');
    edited[at] = (edited[at] as string).replace('"~/.claude/CLAUDE.md"', '"~/.claude/OTHER.md"');
    await tamper(edited);
    await expectBroken('edited', installSeq());
  });

  it('a deleted line: exit 6, "removed" at the missing seq', async () => {
    const cut = lines();
    cut.splice(1, 1);
    await tamper(cut);
    await expectBroken('removed', 2);
  });

  it('two lines swapped: exit 6, "reordered"', async () => {
    const swapped = lines();
    [swapped[0], swapped[1]] = [swapped[1] as string, swapped[0] as string];
    await tamper(swapped);
    await expectBroken('reordered', 2);
  });

  it('a cut last line: caught through the head the controller recorded when it stopped', async () => {
    const count = lines().length;
    await tamper(lines().slice(0, count - 1));
    const document = await verify(['--host', 'node-01'], 6);
    expect(document.hosts[0]?.problems[0]).to.include({ kind: 'removed', seq: count });
    const local = await verify(['--home', home('node-01')], 6);
    expect(local.hosts[0]?.problems[0]?.message).to.contain(
      `before the trusted head (seq ${count})`,
    );
  });

  it('a torn last line: reported while it is there; moved aside at the next start', async () => {
    await writeFile(logPath('node-01'), `${original}{"seq":99,"ts":"2026-`);
    const local = await verify(['--home', home('node-01')], 6);
    expect(local.hosts[0]?.problems.map((p) => p.kind)).to.deep.equal(['torn']);
    const remote = await verify(['--host', 'node-01'], 6);
    expect(remote.hosts[0]?.problems.map((p) => p.kind)).to.deep.equal(['torn']);
    // Written while it is stopped (a crash mid-append): set aside with a recovery record.
    await whileStopped('node-01', async () => {
      await writeFile(logPath('node-01'), `${original}{"seq":99,"ts":"2026-`);
      await writeFile(headPath('node-01'), originalHead);
    });
    const after = await verify(['--home', home('node-01')], 0);
    expect(after.hosts[0]?.records).to.equal(lines().length + 1);
    const torn = (await readdir(stateDir('node-01'))).filter((n) =>
      n.startsWith('audit.jsonl.torn-'),
    );
    expect(torn.length).to.be.greaterThan(0);
  });

  it('a log rewritten behind the operator’s back (consistent, restarted) is caught against the heads it kept: exit 6, then --accept-current', async () => {
    // Verbs that talk to node-01 keep its head: here a verify (which settles what it saw).
    await verify(['--host', 'node-01'], 0);
    const seen = await run(['audit', 'show', '--host', 'node-01', '--limit', '1']);
    expect(seen.exitCode, seen.stderr).to.equal(0);
    // An older, consistent prefix of the log, put back with the controller's own head file gone:
    // the node starts, verifies it and serves — only the operator can tell.
    await whileStopped('node-01', async () => {
      await writeFile(logPath('node-01'), `${lines().slice(0, 1).join('\n')}\n`);
      await rm(headPath('node-01'));
    });
    const local = await verify(['--home', home('node-01')], 0); // the node alone cannot tell
    expect(local.hosts[0]?.ok).to.equal(true);
    const caught = await verify(['--host', 'node-01'], 6);
    expect(caught.hosts[0]?.status).to.equal('broken');
    expect(caught.hosts[0]?.problems.map((p) => p.kind)).to.include('rewritten');
    const human = await run(['audit', 'verify', '--host', 'node-01']);
    expect(human.exitCode).to.equal(6);
    expect(human.stdout).to.match(/node-01: rewritten at /);
    // Still reported until the operator accepts it; then held to the node's current head.
    await verify(['--host', 'node-01'], 6);
    await verify(['--host', 'node-01', '--accept-current'], 0);
    await verify(['--host', 'node-01'], 0);
  });

  it('--home --repair: refused under a running controller; with it stopped, seals the broken log aside and starts anew', async () => {
    const edited = lines();
    edited[0] = (edited[0] as string).replace('"outcome":"ok"', '"outcome":"failed"');
    await tamper(edited);
    const before = await verify(['--home', home('node-01')], 6);
    expect(before.hosts[0]?.problems[0]).to.include({ segment: 'audit.jsonl', segmentLine: 1 });
    const busy = await run(['audit', 'verify', '--home', home('node-01'), '--repair']);
    expect(busy.exitCode, busy.stderr).to.equal(3);
    expect(busy.stderr).to.contain('stop it before --repair');
    let repaired: VerifyJson | undefined;
    await whileStopped('node-01', async () => {
      repaired = await verify(['--home', home('node-01'), '--repair'], 0);
    });
    expect(repaired?.repair?.repaired).to.equal(true);
    const sealed = repaired?.repair?.sealedInto as string;
    expect(await readFile(join(sealed, 'audit.jsonl'), 'utf8')).to.equal(`${edited.join('\n')}\n`);
    const fresh = JSON.parse(
      (await readFile(logPath('node-01'), 'utf8')).split('\n')[0] as string,
    ) as Record<string, unknown>;
    expect(fresh).to.include({ seq: 1, operation: 'audit.repair', outcome: 'recovered' });
    // The node audits again, on the new chain.
    const again = await run(['config', 'export', 'node-01', '~/.claude/CLAUDE.md']);
    expect(again.exitCode, again.stderr).to.equal(0);
    await whileStopped('node-01', async () => {
      const now = (await readFile(logPath('node-01'), 'utf8')).trimEnd().split('\n');
      expect(JSON.parse(now[now.length - 1] as string)).to.include({
        operation: 'export',
        outcome: 'ok',
      });
      await verify(['--home', home('node-01')], 0);
    });
  });

  it('audit show (no flags) lists the operator’s config install under the node record’s operation id', async () => {
    const node = records().find((r) => r['operation'] === 'install') as {
      operationId: string;
      operation: string;
    };
    const result = await run(['audit', 'show', '--json']);
    expect(result.exitCode, result.stderr).to.equal(0);
    const document = json<ShowJson>(result);
    expect(document.schema).to.equal('fleet.audit/v1');
    expect(document.source).to.deep.equal({
      kind: 'operator',
      path: join(env['XDG_STATE_HOME'] as string, 'fleet', 'operator.jsonl'),
    });
    const installs = document.records.filter((r) => r['verb'] === 'config install');
    expect(installs).to.have.length(1);
    expect(installs[0]).to.include({
      host: 'node-01',
      operationId: node.operationId,
      outcome: 'ok',
    });
    const human = await run(['audit', 'show']);
    expect(human.stdout).to.contain(node.operationId);
  });

  it('every write names its commit: the receipt, the node record, the operator log and audit show name HEAD', async () => {
    // Issue 36, contract §8.4: the commit the install's content was rendered from.
    expect(head).to.match(/^[0-9a-f]{40}$/);
    expect(receipt['repoCommit']).to.equal(head);
    const node = records().find((r) => r['operation'] === 'install');
    expect(node).to.include({ operationId: receipt['operationId'], repoCommit: head });
    const operator = json<ShowJson>(await run(['audit', 'show', '--json']));
    const logged = operator.records.filter((r) => r['verb'] === 'config install');
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({ operationId: receipt['operationId'], repoCommit: head });
    // The tables: a COMMIT column, 12 digits, on the install's row (through --host, too).
    for (const args of [[], ['--host', 'node-01']]) {
      const human = await run(['audit', 'show', ...args]);
      expect(human.exitCode, human.stderr).to.equal(0);
      const [header, ...rows] = human.stdout.trimEnd().split('\n');
      expect(header).to.contain('COMMIT');
      const row = rows.find((line) => line.includes(receipt['operationId'] as string));
      expect(row, human.stdout).to.contain(` ${head.slice(0, 12)} `);
      expect(row).to.not.contain(head.slice(0, 13));
    }
  });

  it('audit show --host answers the node’s records verbatim; --limit keeps the newest', async () => {
    const result = await run(['audit', 'show', '--host', 'node-01', '--json']);
    expect(result.exitCode, result.stderr).to.equal(0);
    const document = json<ShowJson>(result);
    expect(document.source).to.deep.equal({ kind: 'controller', hosts: ['node-01'] });
    expect(document.records).to.deep.equal(
      lines().map((line) => ({ host: 'node-01', ...(JSON.parse(line) as object) })),
    );
    const newest = json<ShowJson>(
      await run(['audit', 'show', '--host', 'node-01', '--limit', '1', '--json']),
    );
    expect(newest.records).to.have.length(1);
    expect(Number(newest.records[0]?.['seq'])).to.be.at.least(lines().length);
    await whileStopped('node-01', async () => {
      const now = (await readFile(logPath('node-01'), 'utf8')).trimEnd().split('\n');
      const last = (JSON.parse(now[now.length - 1] as string) as { seq: number }).seq;
      const local = json<ShowJson>(
        await run(['audit', 'show', '--home', home('node-01'), '--limit', '2', '--json']),
      );
      expect(local.source.kind).to.equal('node');
      expect(local.records.map((r) => r['seq'])).to.deep.equal([last - 1, last]);
    });
  });

  it('prints control characters of a tampered log escaped, never raw (catalogue E38)', async () => {
    const hostile = lines();
    const at = installSeq() - 1;
    hostile[at] = (hostile[at] as string).replace(
      '"~/.claude/CLAUDE.md"',
      JSON.stringify(`~/${ESC}[2J${ESC}]8;;http://x${ESC}\\\n{"outcome":"ok"}`),
    );
    await tamper(hostile);
    for (const args of [
      ['audit', 'show', '--home', home('node-01')],
      ['audit', 'show', '--host', 'node-01'],
    ]) {
      const result = await run(args);
      expect(result.exitCode, result.stderr).to.equal(0);
      expect(result.stdout).to.not.contain(ESC);
      expect(result.stdout).to.contain('~/\\x1b[2J\\x1b]8;;http://x\\x1b\\\\n{"outcome":"ok"}');
      // The header row and a row per line: no forged line.
      const [header, ...rows] = result.stdout.trimEnd().split('\n');
      expect(header).to.match(/^(HOST +)?SEQ +TIME +OUTCOME/);
      expect(rows).to.have.length(hostile.length);
    }
    const broken = await run(['audit', 'verify', '--host', 'node-01']);
    expect(broken.exitCode).to.equal(6);
    expect(broken.stdout + broken.stderr).to.not.contain(ESC);
  });

  it('an unreachable host: exit 5 when nothing is broken, 6 when something is', async () => {
    const repo = join(tmp.path, 'repo-dead-node');
    await cp(lab.repo, repo, { recursive: true });
    const node02 = lab.hosts.find((h) => h.name === 'node-02')?.controller as string;
    const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.contain(node02);
    await writeFile(
      join(repo, 'fleet.yaml'),
      manifest.split(node02).join(`http://127.0.0.1:${await freePort()}`),
    );
    const document = await verify(['--repo', repo], 5);
    expect(document.hosts.map((h) => [h.host, h.status])).to.deep.equal([
      ['node-01', 'intact'],
      ['node-02', 'unreachable'],
    ]);
    expect(document.hosts[1]?.error?.code).to.equal('HOST_UNREACHABLE');
    const cut = lines();
    cut.splice(1, 1);
    await tamper(cut);
    await verify(['--repo', repo], 6);
  });
});
