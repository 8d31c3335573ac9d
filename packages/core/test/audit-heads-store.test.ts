/**
 * Where the operator keeps the audit heads it saw (docs/audit-log.md "The heads the operator
 * keeps"): one file per repository, so a verb reads and replaces only its own repository's heads
 * (contract §14: its cost follows its own fleet, not every lab this operator ever used); the
 * single file of earlier versions is still read, never written.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { FleetError } from '../src/errors.js';
import {
  AUDIT_HEADS_DIGESTS_DIR,
  AUDIT_HEADS_DIR,
  AUDIT_HEADS_FILE,
  auditHeadsPath,
  journalPathOf,
  readAuditHeads,
  recordSeenHeads,
  settleSeenHeads,
  updateAuditHeads,
} from '../src/client/audit-heads.js';
import { seenHeadsOf } from '../src/client/seen-heads.js';

const sha = (c: string) => c.repeat(64);
const head = (seq: number, c: string) => ({ seq, sha256: sha(c) });

describe('audit heads: one file per repository', () => {
  let dir: string;
  let env: Record<string, string>;
  let repoA: string;
  let repoB: string;
  const options = () => ({ env, now: () => new Date('2026-12-02T00:00:00.000Z') });
  const headsDir = () => join(dir, 'state', 'fleet', AUDIT_HEADS_DIR);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-audit-heads-'));
    env = { XDG_STATE_HOME: join(dir, 'state') };
    repoA = join(dir, 'repo-a');
    repoB = join(dir, 'repo-b');
    await mkdir(repoA);
    await mkdir(repoB);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps each repository in its own private file, and a verb touches only its own', async () => {
    await recordSeenHeads(repoA, new Map([['node-01', head(3, 'a')]]), 'drift', options());
    await recordSeenHeads(repoB, new Map([['node-01', head(9, 'b')]]), 'drift', options());
    const fileB = auditHeadsPath(repoB, options());
    const before = await readFile(fileB, 'utf8');

    await recordSeenHeads(repoA, new Map([['node-01', head(4, 'c')]]), 'apply', options());

    // A's second verb went to A's journal; B's file is as it was.
    const fileA = auditHeadsPath(repoA, options());
    expect((await readdir(headsDir())).sort()).to.deep.equal(
      [fileA, journalPathOf(fileA), fileB].map((p) => basename(p)).sort(),
    );
    expect((await stat(journalPathOf(fileA))).mode & 0o777).to.equal(0o600);
    expect(await readFile(fileB, 'utf8')).to.equal(before);
    const a = await readAuditHeads(repoA, options());
    expect(Object.keys(a.repos)).to.deep.equal([repoA]);
    expect(seenHeadsOf(a, repoA, 'node-01').map((h) => [h.seq, h.verb])).to.deep.equal([
      [3, 'drift'],
      [4, 'apply'],
    ]);
    expect(seenHeadsOf(await readAuditHeads(repoB, options()), repoB, 'node-01')).to.have.length(1);
    expect((await stat(auditHeadsPath(repoA, options()))).mode & 0o777).to.equal(0o600);
    expect((await stat(headsDir())).mode & 0o777).to.equal(0o700);
  });

  it('reads the single file of earlier versions for a repository without its own, never writes it', async () => {
    const legacyPath = join(dir, 'state', 'fleet', AUDIT_HEADS_FILE);
    const seen = { seq: 2, sha256: sha('d'), seenAt: '2026-11-30T00:00:00.000Z', verb: 'drift' };
    const legacy = `${JSON.stringify({
      schema: 'fleet.audit-heads/v1',
      repos: { [repoA]: { 'node-01': [seen] }, [repoB]: { 'node-02': [seen] } },
    })}\n`;
    await mkdir(join(dir, 'state', 'fleet'), { recursive: true });
    await writeFile(legacyPath, legacy, { mode: 0o600 });

    expect(seenHeadsOf(await readAuditHeads(repoA, options()), repoA, 'node-01')).to.deep.equal([
      seen,
    ]);
    await recordSeenHeads(repoA, new Map([['node-01', head(5, 'e')]]), 'drift', options());

    // The earlier heads carried over into the repository's own file; the old file is untouched.
    const own = JSON.parse(await readFile(auditHeadsPath(repoA, options()), 'utf8')) as {
      repos: Record<string, Record<string, { seq: number }[]>>;
    };
    expect(own.repos[repoA]?.['node-01']?.map((h) => h.seq)).to.deep.equal([2, 5]);
    expect(own.repos[repoB]).to.equal(undefined);
    expect(await readFile(legacyPath, 'utf8')).to.equal(legacy);
  });

  it('refuses a file that names another repository, naming the file', async () => {
    await recordSeenHeads(repoB, new Map([['node-01', head(1, 'f')]]), 'drift', options());
    await mkdir(headsDir(), { recursive: true });
    await writeFile(
      auditHeadsPath(repoA, options()),
      await readFile(auditHeadsPath(repoB, options()), 'utf8'),
    );
    const error = await readAuditHeads(repoA, options()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(FleetError);
    expect((error as FleetError).code).to.equal('USAGE');
    expect((error as FleetError).message).to.include(auditHeadsPath(repoA, options()));
  });

  it('reads the heads it wrote as written, and checks whole a file changed since (a digest apart)', async () => {
    await recordSeenHeads(repoA, new Map([['node-01', head(3, 'a')]]), 'drift', options());
    const path = auditHeadsPath(repoA, options());
    const digests = join(dir, 'state', 'fleet', AUDIT_HEADS_DIGESTS_DIR);
    expect(await readdir(digests)).to.deep.equal([`${path.split('/').pop()}.sha256`]);
    expect(seenHeadsOf(await readAuditHeads(repoA, options()), repoA, 'node-01')).to.have.length(1);
    // A hand edit: another head, not one fleet saw (its sha256 is no digest): refused, not read.
    const written = await readFile(path, 'utf8');
    await writeFile(path, written.replace(sha('a'), 'not a digest'));
    const error = await readAuditHeads(repoA, options()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as FleetError).code).to.equal('USAGE');
    expect((error as FleetError).message).to.include('is not a file of audit heads fleet wrote');
    // A duplicate key is refused as well, though the rest is what fleet wrote.
    await writeFile(path, written.replace('"schema"', '"schema": "x", "schema"'));
    expect(
      await readAuditHeads(repoA, options()).then(
        () => 'read',
        (e: FleetError) => e.code,
      ),
    ).to.equal('USAGE');
    // Without its digest, a file fleet wrote is checked whole, and read.
    await writeFile(path, written);
    await rm(digests, { recursive: true });
    expect(seenHeadsOf(await readAuditHeads(repoA, options()), repoA, 'node-01')).to.have.length(1);
  });

  it('a verify collapses the heads and forgets the files of repositories that are gone', async () => {
    await recordSeenHeads(repoA, new Map([['node-01', head(3, 'a')]]), 'drift', options());
    await recordSeenHeads(repoA, new Map([['node-01', head(4, 'b')]]), 'drift', options());
    await recordSeenHeads(repoB, new Map([['node-01', head(7, 'c')]]), 'drift', options());
    await rm(repoB, { recursive: true });

    await settleSeenHeads(repoA, new Map([['node-01', head(4, 'b')]]), 'audit verify', options());

    const kept = seenHeadsOf(await readAuditHeads(repoA, options()), repoA, 'node-01');
    expect(kept.map((h) => [h.seq, h.verb])).to.deep.equal([[4, 'audit verify']]);
    expect(await readdir(headsDir())).to.deep.equal([
      auditHeadsPath(repoA, options()).split('/').pop(),
    ]);
    // The gone repository's digest goes with its heads.
    expect(await readdir(join(dir, 'state', 'fleet', AUDIT_HEADS_DIGESTS_DIR))).to.deep.equal([
      `${auditHeadsPath(repoA, options()).split('/').pop()}.sha256`,
    ]);
  });
});

describe('audit heads: the journal a verb appends to', () => {
  let dir: string;
  let env: Record<string, string>;
  let repo: string;
  let clock = 0;
  const options = () => ({ env, now: () => new Date(Date.UTC(2026, 11, 2, 0, 0, clock++)) });
  const kept = async () =>
    seenHeadsOf(await readAuditHeads(repo, options()), repo, 'node-01').map((h) => h.seq);
  const record = (seq: number, c = 'a') =>
    recordSeenHeads(repo, new Map([['node-01', head(seq, c)]]), 'drift', options());

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-audit-journal-'));
    env = { XDG_STATE_HOME: join(dir, 'state') };
    repo = join(dir, 'repo');
    await mkdir(repo);
    clock = 0;
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('appends each later verb as one line, leaving the heads file as it was', async () => {
    await record(1);
    const file = auditHeadsPath(repo, options());
    const written = await readFile(file, 'utf8');
    await record(2, 'b');
    await record(3, 'c');
    expect(await readFile(file, 'utf8')).to.equal(written);
    const lines = (await readFile(journalPathOf(file), 'utf8')).trimEnd().split('\n');
    expect(lines).to.have.length(2);
    expect(JSON.parse(lines[0] ?? '')).to.deep.equal({
      schema: 'fleet.audit-heads-seen/v1',
      repo,
      seenAt: '2026-12-02T00:00:01.000Z',
      verb: 'drift',
      heads: { 'node-01': `2:${sha('b')}` },
    });
    expect(await kept()).to.deep.equal([1, 2, 3]);
  });

  it('folds the journal into the file once it outgrows it, and at a verify', async () => {
    await record(1);
    const file = auditHeadsPath(repo, options());
    const written = await readFile(file, 'utf8');
    await record(2, 'b');
    const lineBytes = (await stat(journalPathOf(file))).size;
    // The file is small: the journal is folded in once it holds 64 KiB.
    let seq = 2;
    do {
      seq += 1;
      await record(seq, (seq % 10).toString());
    } while ((await readFile(file, 'utf8')) === written && seq < 2000);
    expect(seq).to.be.closeTo(2 + 65536 / lineBytes, 4);
    expect(await readdir(join(dir, 'state', 'fleet', AUDIT_HEADS_DIR))).to.deep.equal([
      basename(file),
    ]);
    const folded = await kept();
    expect(folded).to.have.length.at.most(64);
    expect([folded[0], folded[folded.length - 1]]).to.deep.equal([1, seq]);

    await record(seq + 1, 'f');
    await settleSeenHeads(repo, new Map([['node-01', head(seq + 1, 'f')]]), 'audit verify', {
      env,
    });
    expect(await kept()).to.deep.equal([seq + 1]);
    expect(await readdir(join(dir, 'state', 'fleet', AUDIT_HEADS_DIR))).to.deep.equal([
      basename(file),
    ]);
  });

  it('leaves out a last line a crash cut short, and cuts it off before the next append', async () => {
    await record(1);
    await record(2, 'b');
    const journal = journalPathOf(auditHeadsPath(repo, options()));
    const whole = await readFile(journal, 'utf8');
    await writeFile(journal, `${whole}{"schema":"fleet.audit-he`);
    expect(await kept()).to.deep.equal([1, 2]);
    await record(3, 'c');
    expect(await kept()).to.deep.equal([1, 2, 3]);
    expect(
      (await readFile(journal, 'utf8')).startsWith(`${whole}{"schema":"fleet.audit-heads-seen/v1"`),
    ).to.equal(true);
  });

  it('refuses a whole line that is not one fleet wrote, or names another repository', async () => {
    await record(1);
    await record(2, 'b');
    const journal = journalPathOf(auditHeadsPath(repo, options()));
    const whole = await readFile(journal, 'utf8');
    const refusal = async () =>
      readAuditHeads(repo, options()).then(
        () => 'read',
        (e: FleetError) => `${e.code} ${e.message}`,
      );
    for (const [line, why] of [
      ['not json\n', 'line 2: the line is not valid JSON'],
      [whole.replace(`2:${sha('b')}`, `2:${sha('B')}`), 'line 2: not a line of audit heads'],
      [whole.replace('"heads"', '"heads":{},"heads"'), 'line 2: the line: duplicate key "heads"'],
      [whole.replace(JSON.stringify(repo), JSON.stringify(`${repo}-x`)), 'another repository'],
    ]) {
      await writeFile(journal, `${whole}${line}`);
      expect(await refusal()).to.match(new RegExp(`^USAGE ${journal}.*${why}`));
    }
  });

  it('folds the same journal twice (a crash before its removal) without keeping a head twice', async () => {
    await record(1);
    await record(2, 'b');
    const journal = journalPathOf(auditHeadsPath(repo, options()));
    const lines = await readFile(journal, 'utf8');
    await updateAuditHeads(repo, (hosts) => hosts, { env });
    expect(await kept()).to.deep.equal([1, 2]);
    await writeFile(journal, lines);
    expect(await kept()).to.deep.equal([1, 2]);
  });
});
