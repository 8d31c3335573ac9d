/**
 * `fleet harness reconcile` end to end on a lab fleet (contract §10.3, issue 5 item 4), through the
 * real binary and real controllers. One lab for the file, the runs in order:
 *
 * - node-01 is left on the policy three releases back, across rewrites of most of its lines, with
 *   someone's own text around the block of AGENTS.md and a BOM/CRLF GEMINI.md without a block: it
 *   is `would-update` without --confirm (nothing written), `updated` with it, `current` after;
 * - node-02 has one local line in CLAUDE.md: `diverged`, that file never written (bytes equal),
 *   its healable block files written;
 * - node-03's controller URL points at a closed port: `offline_pending`, its first-seen time kept
 *   across two runs, healed by the first run after it returns;
 * - `--unattended` refused (exit 7) without `unattended: allow` committed, refused by a node whose
 *   own policy does not allow it, allowed with both, and marked in the node's audit.
 *
 * The operator state (XDG_STATE_HOME) is a temp dir: the state file and the rolling log are read
 * from there.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { parseNodePolicy, type LabDocument } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';
import { destroyLab, fleet, json, tempDir, type FleetRun } from '../src/fleet.js';

const CLAUDE = '~/.claude/CLAUDE.md';
const AGENTS = '~/.codex/AGENTS.md';
const GEMINI = '~/.gemini/GEMINI.md';
const CANONICAL = 'domains/harness-policy/CLAUDE.md';
const B = '<!-- fleet:harness-policy:begin -->';
const E = '<!-- fleet:harness-policy:end -->';
const BOM = '\ufeff';

interface Target {
  path: string;
  state: string;
  localLines: number;
  drift: string;
}
interface Host {
  host: string;
  state: string;
  targets: Target[];
  pendingSince?: string;
  operationId?: string;
}
interface ReconcileDoc {
  schema: string;
  canonicalSha: string;
  repoCommit: string;
  mode: string;
  hosts: Host[];
}
interface StateFile {
  last_run: string;
  canonical_sha: string;
  current: string[];
  updated: string[];
  would_update: string[];
  diverged: string[];
  offline_pending: { host: string; first_seen: string; last_seen: string }[];
  errors: string[];
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** A policy release that rewrites most lines of the one before (blank lines and markers aside). */
function release(n: number): string {
  return [
    `# Agent policy, release ${n}`,
    '',
    `Release ${n} of the fleet's policy for coding agents; this paragraph is new in release ${n}.`,
    '',
    B,
    `## Policy (release ${n})`,
    '',
    `- Release ${n}: work in small steps and have each one reviewed.`,
    `- Release ${n}: refer to secrets by their names, never by their values.`,
    `- Release ${n}: ask a person before any destructive operation.`,
    E,
    '',
  ].join('\n');
}

/** The section between the markers of a canonical policy, as a block carries it. */
function section(canonical: string): string {
  const start = canonical.indexOf(`${B}\n`);
  const end = canonical.indexOf(`${E}\n`);
  if (start < 0 || end < 0) throw new Error('no policy section');
  return canonical.slice(start + B.length + 1, end);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('e2e: fleet harness reconcile on a lab fleet', function () {
  this.timeout(180_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let lab: LabDocument;
  let labDir: string;
  let env: Record<string, string>;

  before(async () => {
    tmp = await tempDir('fleet-e2e-reconcile-');
    labDir = join(tmp.path, 'lab');
    const up = await fleet(['lab', 'up', '--hosts', '3', '--dir', labDir, '--json'], {
      cwd: tmp.path,
    });
    expect(up.exitCode, up.stderr).to.equal(0);
    lab = json<LabDocument>(up);
    env = {
      FLEET_REPO: lab.repo,
      FLEET_CREDENTIALS: lab.credentials,
      XDG_STATE_HOME: join(tmp.path, 'operator-state'),
    };
  });
  after(async () => {
    if (labDir) await destroyLab(labDir);
    await tmp?.cleanup();
  });

  const stateDir = (): string => join(env['XDG_STATE_HOME'] as string, 'fleet');
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', lab.repo, ...args], { encoding: 'utf8' });
  const home = (name: string): string => {
    const host = lab.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`no lab host ${name}`);
    return host.home;
  };
  const nodePath = (name: string, path: string): string =>
    join(home(name), ...path.slice(2).split('/'));
  const readNode = (name: string, path: string): Promise<Buffer> => readFile(nodePath(name, path));
  /** The node's owner allows (or not) unattended installs of harness-policy in its policy. */
  async function nodeAllowsUnattended(name: string, allow: boolean): Promise<void> {
    const file = nodePath(name, '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(file, 'utf8'), file);
    await writeNodePolicy(
      home(name),
      {
        ...policy,
        domains: {
          ...policy.domains,
          'harness-policy': { unattended: allow ? 'allow' : 'deny' },
        },
      },
      { force: true },
    );
  }
  async function writeNode(name: string, path: string, content: string): Promise<void> {
    await mkdir(dirname(nodePath(name, path)), { recursive: true });
    await writeFile(nodePath(name, path), content);
  }
  async function commit(path: string, content: string, message: string): Promise<void> {
    await writeFile(join(lab.repo, ...path.split('/')), content);
    git('add', '--', path);
    git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      message,
    );
  }
  const run = (...args: string[]): Promise<FleetRun> => fleet(args, { cwd: tmp.path, env });
  async function reconcile(
    ...args: string[]
  ): Promise<{ exitCode: number; doc: ReconcileDoc; run: FleetRun }> {
    const result = await run('harness', 'reconcile', ...args, '--json');
    const doc = json<ReconcileDoc>(result); // exactly one JSON document on stdout
    return { exitCode: result.exitCode, doc, run: result };
  }
  const hostOf = (doc: ReconcileDoc, name: string): Host => {
    const found = doc.hosts.find((h) => h.host === name);
    if (!found) throw new Error(`no host ${name} in ${JSON.stringify(doc)}`);
    return found;
  };
  const targets = (host: Host): [string, string, string][] =>
    host.targets.map((t) => [t.path, t.drift, t.state]);
  const readState = async (): Promise<StateFile> =>
    JSON.parse(await readFile(join(stateDir(), 'harness-reconcile.json'), 'utf8')) as StateFile;
  const auditLines = async (name: string): Promise<Record<string, unknown>[]> =>
    (await readFile(join(home(name), '.local', 'state', 'fleet', 'audit.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  // Shared across the ordered tests below.
  let oldest: string;
  let agentsOutsideBefore: string;
  let agentsOutsideAfter: string;
  const agentsHead = '# My Codex notes\n\nKeep these lines.\n\n';
  const agentsTail = '\n\nText after the block, and no final newline';
  const geminiMine = `${BOM}# Gemini, my own\r\n\r\nCRLF lines that are mine.\r\n`;
  let divergedBytes: Buffer;
  let offlineSince: string;
  let node03Url: string;

  it('without --confirm: a host three releases behind, across a rewrite, would be updated; nothing is written', async () => {
    oldest = git('show', `HEAD:${CANONICAL}`);
    for (const n of [1, 2, 3])
      await commit(CANONICAL, release(n), `policy release ${n}: a rewrite`);
    const head = git('show', `HEAD:${CANONICAL}`);
    const oldLines = new Set(oldest.split('\n').filter((l) => l.trim() !== ''));
    const kept = head.split('\n').filter((l) => l.trim() !== '' && oldLines.has(l));
    expect(kept.length, 'most lines rewritten').to.be.lessThan(
      head.split('\n').filter((l) => l.trim() !== '').length / 2,
    );

    await writeNode('node-01', CLAUDE, oldest);
    agentsOutsideBefore = `${agentsHead}${B}\n${E}${agentsTail}`;
    await writeNode('node-01', AGENTS, `${agentsHead}${B}\n${section(oldest)}${E}${agentsTail}`);
    await writeNode('node-01', GEMINI, geminiMine);
    const before = await Promise.all(
      [CLAUDE, AGENTS, GEMINI].map(async (p) => sha256(await readNode('node-01', p))),
    );

    const { exitCode, doc } = await reconcile();
    expect(exitCode).to.equal(1);
    expect(doc.schema).to.equal('fleet.reconcile/v1');
    expect(doc.mode).to.equal('dry-run');
    expect(doc.canonicalSha).to.equal(git('rev-parse', `HEAD:${CANONICAL}`).trim());
    expect(doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'would-update'],
      ['node-02', 'would-update'],
      ['node-03', 'would-update'],
    ]);
    expect(targets(hostOf(doc, 'node-01'))).to.deep.equal([
      [CLAUDE, 'stale', 'would-update'],
      [AGENTS, 'stale', 'would-update'],
      [GEMINI, 'missing', 'would-update'],
    ]);
    for (const target of hostOf(doc, 'node-01').targets) expect(target.localLines).to.equal(0);
    const after = await Promise.all(
      [CLAUDE, AGENTS, GEMINI].map(async (p) => sha256(await readNode('node-01', p))),
    );
    expect(after).to.deep.equal(before);
    let exists = true;
    await stat(nodePath('node-02', CLAUDE)).catch(() => (exists = false));
    expect(exists, 'nothing written on node-02').to.equal(false);

    const state = await readState();
    expect(state.would_update).to.deep.equal(['node-01', 'node-02', 'node-03']);
    expect(state.canonical_sha).to.equal(doc.canonicalSha);
    for (const file of ['harness-reconcile.json', 'harness-reconcile.log']) {
      expect((await stat(join(stateDir(), file))).mode & 0o777, file).to.equal(0o600);
    }
  });

  it('with --confirm: heals the old host, leaves the diverged file untouched, remembers the offline host', async () => {
    // node-02: the current policy plus one line of its own.
    await writeNode(
      'node-02',
      CLAUDE,
      `${git('show', `HEAD:${CANONICAL}`)}- a rule only node-02 has\n`,
    );
    divergedBytes = await readNode('node-02', CLAUDE);
    // node-03: its controller URL now points at a closed port (a reviewed commit of fleet.yaml).
    node03Url = lab.hosts.find((h) => h.name === 'node-03')?.controller as string;
    const manifest = await readFile(join(lab.repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.include(node03Url);
    await commit(
      'fleet.yaml',
      manifest.replace(node03Url, `http://127.0.0.1:${await closedPort()}`),
      'node-03 moved',
    );

    const { exitCode, doc } = await reconcile('--confirm');
    expect(exitCode).to.equal(1);
    expect(doc.mode).to.equal('confirm');
    expect(doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'updated'],
      ['node-02', 'diverged'],
      ['node-03', 'offline_pending'],
    ]);
    expect(targets(hostOf(doc, 'node-01'))).to.deep.equal([
      [CLAUDE, 'stale', 'updated'],
      [AGENTS, 'stale', 'updated'],
      [GEMINI, 'missing', 'updated'],
    ]);
    const head = git('show', `HEAD:${CANONICAL}`);
    expect((await readNode('node-01', CLAUDE)).toString('utf8')).to.equal(head);

    // The blocks: everything outside the markers byte for byte, the new section inside.
    const agents = (await readNode('node-01', AGENTS)).toString('utf8');
    expect(agents).to.equal(`${agentsHead}${B}\n${section(head)}${E}${agentsTail}`);
    agentsOutsideAfter = agents.replace(section(head), '');
    expect(agentsOutsideAfter).to.equal(agentsOutsideBefore);
    const gemini = (await readNode('node-01', GEMINI)).toString('utf8');
    expect(gemini).to.equal(
      `${geminiMine}\r\n${B}\r\n${section(head).replace(/\n/g, '\r\n')}${E}\r\n`,
    );

    // node-02: the diverged file untouched, its block files (missing) written.
    const diverged = hostOf(doc, 'node-02');
    expect(targets(diverged)).to.deep.equal([
      [CLAUDE, 'diverged', 'diverged'],
      [AGENTS, 'missing', 'updated'],
      [GEMINI, 'missing', 'updated'],
    ]);
    expect(diverged.targets[0]?.localLines).to.equal(1);
    expect((await readNode('node-02', CLAUDE)).equals(divergedBytes)).to.equal(true);

    const offline = hostOf(doc, 'node-03');
    expect(offline.pendingSince).to.be.a('string');
    offlineSince = offline.pendingSince as string;

    // Each install: one operation per host, in the operator log and the node's audit under one id.
    const log = (await readFile(join(stateDir(), 'operator.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record['verb'] === 'harness reconcile');
    expect(log.map((r) => r['host']).sort()).to.deep.equal(['node-01', 'node-02']);
    for (const name of ['node-01', 'node-02']) {
      const id = hostOf(doc, name).operationId;
      expect(id, name).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(log.find((r) => r['host'] === name)?.['operationId']).to.equal(id);
      const audit = (await auditLines(name)).filter((line) => line['operationId'] === id);
      expect(audit, name).to.have.length(1);
      expect(String(audit[0]?.['detail'])).to.not.include('unattended');
    }

    const state = await readState();
    expect(state.updated).to.deep.equal(['node-01']);
    expect(state.diverged).to.deep.equal(['node-02']);
    expect(state.offline_pending).to.deep.equal([
      { host: 'node-03', first_seen: offlineSince, last_seen: offlineSince },
    ]);
  });

  it('a second run changes nothing: current where it converged, the pending host keeps its first-seen time', async () => {
    const files = async (): Promise<string[]> =>
      Promise.all(
        [CLAUDE, AGENTS, GEMINI].map(async (p) => {
          const info = await stat(nodePath('node-01', p));
          return `${sha256(await readNode('node-01', p))}:${info.ino}:${info.mtimeMs}`;
        }),
      );
    const before = await files();
    // Reads are audited too (the reconcile reads every host): count the writes.
    const writes01 = async () =>
      (await auditLines('node-01')).filter((line) => line['operation'] === 'install').length;
    const audit01 = await writes01();

    const { exitCode, doc } = await reconcile('--confirm');
    expect(exitCode).to.equal(1);
    expect(doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'current'],
      ['node-02', 'diverged'],
      ['node-03', 'offline_pending'],
    ]);
    expect(hostOf(doc, 'node-01').targets.map((t) => t.state)).to.deep.equal([
      'current',
      'current',
      'current',
    ]);
    expect(hostOf(doc, 'node-01').operationId).to.equal(undefined);
    expect(targets(hostOf(doc, 'node-02'))).to.deep.equal([
      [CLAUDE, 'diverged', 'diverged'],
      [AGENTS, 'current', 'current'],
      [GEMINI, 'current', 'current'],
    ]);
    expect(hostOf(doc, 'node-03').pendingSince).to.equal(offlineSince);
    // Nothing sent to node-01: same bytes, same inodes, same mtimes, no new install record.
    expect(await files()).to.deep.equal(before);
    expect(await writes01()).to.equal(audit01);
    expect((await readNode('node-02', CLAUDE)).equals(divergedBytes)).to.equal(true);

    const state = await readState();
    expect(state.current).to.deep.equal(['node-01']);
    expect(state.offline_pending).to.have.length(1);
    expect(state.offline_pending[0]?.first_seen).to.equal(offlineSince);
    expect(state.offline_pending[0]?.last_seen).to.not.equal(offlineSince);

    // The human form says the same.
    const human = await run('harness', 'reconcile');
    expect(human.exitCode).to.equal(1);
    expect(human.stdout)
      .to.match(/node-01\s+current/)
      .and.match(/node-02\s+diverged/);
    expect(human.stdout).to.include(`pending since ${offlineSince}`);
  });

  it('the first run after the host returns heals it; the next one reports it current', async () => {
    const manifest = await readFile(join(lab.repo, 'fleet.yaml'), 'utf8');
    const restored = manifest.replace(
      new RegExp(`(node-03:\\n\\s+controller: )"?http://127\\.0\\.0\\.1:\\d+"?`),
      `$1"${node03Url}"`,
    );
    expect(restored).to.not.equal(manifest);
    await commit('fleet.yaml', restored, 'node-03 is back');

    const back = await reconcile('--confirm');
    expect(back.exitCode).to.equal(1); // node-02 is still diverged
    expect(hostOf(back.doc, 'node-03').state).to.equal('updated');
    expect(hostOf(back.doc, 'node-03').pendingSince).to.equal(undefined);
    expect((await readNode('node-03', CLAUDE)).toString('utf8')).to.equal(
      git('show', `HEAD:${CANONICAL}`),
    );
    const state = await readState();
    expect(state.offline_pending).to.deep.equal([]);
    expect(state.updated).to.deep.equal(['node-03']);

    const again = await reconcile('--confirm', '--host', 'node-03', '--host', 'node-01');
    expect(again.exitCode).to.equal(0);
    expect(again.doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-03', 'current'],
      ['node-01', 'current'],
    ]);
    // A --host run keeps what it did not visit.
    expect((await readState()).diverged).to.deep.equal(['node-02']);
  });

  it('--unattended is refused (exit 7) without `unattended: allow` in a reviewed commit', async () => {
    const denied = await reconcile('--unattended');
    expect(denied.exitCode).to.equal(7);
    expect(denied.doc).to.not.have.property('hosts');
    const envelope = json<{ error: { code: string; message: string; exitCode: number } }>(
      denied.run,
    );
    expect(envelope.error).to.include({ code: 'UNATTENDED_REFUSED', exitCode: 7 });
    expect(envelope.error.message).to.include('domains.harness-policy.unattended: allow');

    // An uncommitted opt-in is not a reviewed one.
    const manifest = await readFile(join(lab.repo, 'fleet.yaml'), 'utf8');
    expect(manifest).to.match(/harness-policy: \{ unattended: deny \}/);
    await writeFile(
      join(lab.repo, 'fleet.yaml'),
      manifest.replace(
        'harness-policy: { unattended: deny }',
        'harness-policy: { unattended: allow }',
      ),
    );
    const uncommitted = await reconcile('--unattended');
    expect(uncommitted.exitCode).to.equal(7);
    expect(json<{ error: { message: string } }>(uncommitted.run).error.message).to.include(
      'not committed',
    );

    // Usage: --unattended replaces --confirm.
    const both = await reconcile('--unattended', '--confirm');
    expect(both.exitCode).to.equal(2);
    expect(json<{ error: { code: string } }>(both.run).error.code).to.equal('USAGE');
    const log = await readFile(join(stateDir(), 'harness-reconcile.log'), 'utf8');
    expect(log).to.include('refused UNATTENDED_REFUSED');
  });

  it('--unattended with `unattended: allow` committed writes stale and missing targets only, marked in the audit', async () => {
    git('add', '--', 'fleet.yaml');
    git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      'harness-policy: unattended allow',
    );
    await commit(CANONICAL, release(4), 'policy release 4');
    const head = git('show', `HEAD:${CANONICAL}`);

    // fleet.yaml allows it, but the node decides (contract §5.1): node-01's policy does not.
    const claudeBefore = await readNode('node-01', CLAUDE);
    const refused = await reconcile('--unattended', '--host', 'node-01');
    expect(refused.exitCode).to.not.equal(0);
    expect(refused.doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([['node-01', 'error']]);
    expect((await readNode('node-01', CLAUDE)).equals(claudeBefore)).to.equal(true);
    for (const name of ['node-01', 'node-02', 'node-03']) await nodeAllowsUnattended(name, true);

    const { exitCode, doc } = await reconcile('--unattended');
    expect(exitCode).to.equal(1); // node-02's CLAUDE.md stays diverged
    expect(doc.mode).to.equal('unattended');
    expect(doc.hosts.map((h) => [h.host, h.state])).to.deep.equal([
      ['node-01', 'updated'],
      ['node-02', 'diverged'],
      ['node-03', 'updated'],
    ]);
    expect(targets(hostOf(doc, 'node-02'))).to.deep.equal([
      [CLAUDE, 'diverged', 'diverged'],
      [AGENTS, 'stale', 'updated'],
      [GEMINI, 'stale', 'updated'],
    ]);
    expect((await readNode('node-02', CLAUDE)).equals(divergedBytes)).to.equal(true);
    expect((await readNode('node-01', CLAUDE)).toString('utf8')).to.equal(head);
    // Block edits stay byte-exact across runs: the text outside the markers never moves.
    const agents = (await readNode('node-01', AGENTS)).toString('utf8');
    expect(agents).to.equal(`${agentsHead}${B}\n${section(head)}${E}${agentsTail}`);
    expect(agents.replace(section(head), '')).to.equal(agentsOutsideAfter);
    const gemini = (await readNode('node-01', GEMINI)).toString('utf8');
    expect(gemini.startsWith(geminiMine)).to.equal(true);

    for (const name of ['node-01', 'node-02', 'node-03']) {
      const id = hostOf(doc, name).operationId;
      const record = (await auditLines(name)).find((line) => line['operationId'] === id);
      expect(String(record?.['detail']), name).to.match(/^unattended: installed/);
    }
    const log = (await readFile(join(stateDir(), 'operator.jsonl'), 'utf8')).trim().split('\n');
    expect(
      log.slice(-3).map((line) => String((JSON.parse(line) as { detail: string }).detail)),
    ).to.satisfy((details: string[]) => details.every((d) => d.startsWith('unattended; ')));

    // Idempotent: the next scheduled run writes nothing.
    const shaBefore = sha256(await readNode('node-01', AGENTS));
    const again = await reconcile('--unattended', '--host', 'node-01', '--host', 'node-03');
    expect(again.exitCode).to.equal(0);
    expect(again.doc.hosts.map((h) => h.state)).to.deep.equal(['current', 'current']);
    expect(sha256(await readNode('node-01', AGENTS))).to.equal(shaBefore);

    const rolling = (await readFile(join(stateDir(), 'harness-reconcile.log'), 'utf8'))
      .split('\n')
      .filter(Boolean);
    expect(rolling.length).to.be.within(1, 500);
    expect(rolling[rolling.length - 1]).to.match(/ unattended run .* exit=0$/);
  });
});
