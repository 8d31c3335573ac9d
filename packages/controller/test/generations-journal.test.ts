/**
 * The runtime journal (contract §12, catalogue 46): parsing fixtures (torn, corrupt, gap, disorder)
 * and the durable writer.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { lastTransaction, parseJournal, RuntimeJournal } from '../src/generations/journal.js';
import { BUILD_A, BUILD_B, expectation, JournalText } from './support/runtime.js';

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    expect(isFleetError(error), String(error)).to.equal(true);
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('runtime journal: parsing', () => {
  it('reads an empty journal as no records', () => {
    expect(parseJournal('')).to.deep.equal({
      records: [],
      torn: null,
      corrupt: null,
      validBytes: 0,
    });
  });

  it('reads a whole transaction, checksums and sequence numbers intact', () => {
    const text = JournalText.upgrade(BUILD_B, BUILD_A, 'end').text();
    const journal = parseJournal(text);
    expect(journal.corrupt).to.equal(null);
    expect(journal.torn).to.equal(null);
    expect(journal.records.map((r) => [r.seq, r.step])).to.deep.equal([
      [1, 'begin'],
      [2, 'staged'],
      [3, 'activated'],
      [4, 'supervisor-restarted'],
      [5, 'accepted'],
      [6, 'end'],
    ]);
    expect(journal.validBytes).to.equal(Buffer.byteLength(text));
    expect(lastTransaction(journal)?.ended).to.equal(true);
  });

  it('treats a torn last record (no newline) as "step not done"', () => {
    const whole = JournalText.upgrade(BUILD_B, BUILD_A, 'activated').text();
    const next = JournalText.upgrade(BUILD_B, BUILD_A, 'supervisor-restarted').lines[3] as string;
    const journal = parseJournal(whole + next.slice(0, 40));
    expect(journal.corrupt).to.equal(null);
    expect(journal.torn).to.deep.equal({ line: 4, bytes: 40 });
    expect(journal.records.map((r) => r.step)).to.deep.equal(['begin', 'staged', 'activated']);
    expect(journal.validBytes).to.equal(Buffer.byteLength(whole));
  });

  it('treats a complete last record without its newline as torn too (the append did not finish)', () => {
    const j = JournalText.upgrade(BUILD_B, BUILD_A, 'staged');
    const journal = parseJournal(j.text().slice(0, -1));
    expect(journal.records.map((r) => r.step)).to.deep.equal(['begin']);
    expect(journal.torn?.line).to.equal(2);
  });

  it('refuses a bad checksum before the end (RECOVERY_REQUIRED territory)', () => {
    const j = JournalText.upgrade(BUILD_B, BUILD_A, 'activated');
    j.lines[1] = (j.lines[1] as string).replace('"reused":false', '"reused":true');
    const journal = parseJournal(j.text());
    expect(journal.corrupt).to.deep.equal({ line: 2, reason: 'bad checksum' });
    expect(journal.records.map((r) => r.step)).to.deep.equal(['begin']);
  });

  it('refuses a bad checksum on the last complete line: only a missing newline means torn', () => {
    const j = JournalText.upgrade(BUILD_B, BUILD_A, 'staged');
    j.lines[1] = (j.lines[1] as string).replace(/"sum":"./, '"sum":"0');
    expect(parseJournal(j.text()).corrupt?.line).to.equal(2);
  });

  it('refuses a sequence gap (a removed record)', () => {
    const j = new JournalText()
      .add('begin', {
        kind: 'upgrade',
        supervisor: 'systemd-user',
        target: expectation(BUILD_B),
        prior: expectation(BUILD_A),
      })
      .gap()
      .add('staged', { buildId: BUILD_B, treeHash: 'f'.repeat(64), reused: false });
    expect(parseJournal(j.text()).corrupt).to.deep.equal({
      line: 2,
      reason: 'sequence gap: 2 expected, 3 found',
    });
  });

  it('refuses a repeated or reordered record', () => {
    const j = JournalText.upgrade(BUILD_B, BUILD_A, 'activated');
    const swapped = [j.lines[0], j.lines[2], j.lines[1]].map((l) => `${l}\n`).join('');
    expect(parseJournal(swapped).corrupt?.line).to.equal(2);
    const repeated = [j.lines[0], j.lines[0]].map((l) => `${l}\n`).join('');
    expect(parseJournal(repeated).corrupt?.reason).to.match(/repeated or out of order/);
  });

  it('refuses a step out of order even with valid checksums (accepted straight after begin)', () => {
    const j = new JournalText()
      .add('begin', {
        kind: 'upgrade',
        supervisor: 'systemd-user',
        target: expectation(BUILD_B),
        prior: null,
      })
      .add('accepted', { buildId: BUILD_B });
    expect(parseJournal(j.text()).corrupt?.reason).to.match(/accepted cannot follow begin/);
  });

  it('refuses a record naming another build than the transaction target', () => {
    const j = new JournalText()
      .add('begin', {
        kind: 'upgrade',
        supervisor: 'systemd-user',
        target: expectation(BUILD_B),
        prior: null,
      })
      .add('staged', { buildId: BUILD_A, treeHash: 'f'.repeat(64), reused: false });
    expect(parseJournal(j.text()).corrupt?.reason).to.match(/not the transaction's target/);
  });

  it('refuses a file that is not JSON lines', () => {
    expect(parseJournal('hello world\n').corrupt).to.deep.equal({ line: 1, reason: 'no checksum' });
    expect(parseJournal('{"seq":1}\n').corrupt?.line).to.equal(1);
    expect(parseJournal('\n').corrupt?.line).to.equal(1);
  });

  it('sees a file of garbage without a newline as one torn record, and says so', () => {
    const journal = parseJournal('garbage');
    expect(journal.records).to.deep.equal([]);
    expect(journal.torn).to.deep.equal({ line: 1, bytes: 7 });
  });

  it('allows ending a transaction that failed before anything was activated, not after', () => {
    const early = new JournalText()
      .add('begin', {
        kind: 'upgrade',
        supervisor: 'systemd-user',
        target: expectation(BUILD_B),
        prior: expectation(BUILD_A),
      })
      .add('failed', { during: 'stage', code: 'GENERATION_INVALID', message: 'x', criteria: [] })
      .add('end', { outcome: 'failed' });
    expect(parseJournal(early.text()).corrupt).to.equal(null);
    const late = JournalText.upgrade(BUILD_B, BUILD_A, 'activated')
      .add('failed', { during: 'restart', code: 'ACTION_FAILED', message: 'x', criteria: [] })
      .add('end', { outcome: 'failed' });
    expect(parseJournal(late.text()).corrupt?.reason).to.match(/end cannot follow failed/);
  });
});

describe('runtime journal: the durable writer', () => {
  let home: string;
  let journal: RuntimeJournal;
  const begin = {
    kind: 'upgrade' as const,
    supervisor: 'systemd-user',
    target: expectation(BUILD_B),
    prior: expectation(BUILD_A),
  };

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-journal-'));
    journal = new RuntimeJournal(home, () => new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('writes ~/.local/state/fleet/journal/runtime.jsonl, one checksummed line per step', async () => {
    const txn = await journal.begin(begin);
    await journal.append(txn, 'staged', {
      buildId: BUILD_B,
      treeHash: 'f'.repeat(64),
      reused: false,
    });
    expect(journal.path).to.equal(join(home, '.local/state/fleet/journal/runtime.jsonl'));
    const parsed = parseJournal(await readFile(journal.path, 'utf8'));
    expect(parsed.corrupt).to.equal(null);
    expect(parsed.records.map((r) => [r.seq, r.txn, r.step])).to.deep.equal([
      [1, txn, 'begin'],
      [2, txn, 'staged'],
    ]);
  });

  it('cuts a torn tail before appending, so the torn step is simply redone', async () => {
    const txn = await journal.begin(begin);
    await writeFile(
      journal.path,
      `${await readFile(journal.path, 'utf8')}{"v":1,"seq":2,"at":"2026`,
      { flag: 'w' },
    );
    expect((await journal.read()).torn).to.not.equal(null);
    await journal.append(txn, 'staged', {
      buildId: BUILD_B,
      treeHash: 'f'.repeat(64),
      reused: false,
    });
    const parsed = await journal.read();
    expect(parsed.torn).to.equal(null);
    expect(parsed.records.map((r) => [r.seq, r.step])).to.deep.equal([
      [1, 'begin'],
      [2, 'staged'],
    ]);
  });

  it('refuses to write past corruption (RECOVERY_REQUIRED) and leaves the file as it is', async () => {
    const text = JournalText.upgrade(BUILD_B, BUILD_A, 'activated')
      .text()
      .replace('"reused":false', '"reused":true');
    await mkdir(dirname(journal.path), { recursive: true });
    await writeFile(journal.path, text);
    const error = await rejection(
      journal.append('01JTXN0000000000000000000A', 'supervisor-restarted', {
        supervisor: 'systemd-user',
        pid: null,
      }),
    );
    expect(error.code).to.equal('RECOVERY_REQUIRED');
    expect(error.message).to.contain('line 2: bad checksum');
    expect(await readFile(journal.path, 'utf8')).to.equal(text);
  });

  it('refuses a step the transaction is not at, and a second begin while one is open', async () => {
    const txn = await journal.begin(begin);
    expect(
      (await rejection(journal.append(txn, 'accepted', { buildId: BUILD_B }))).message,
    ).to.match(/accepted cannot follow begin/);
    expect((await rejection(journal.begin(begin))).message).to.match(/begin cannot follow begin/);
    expect(
      (
        await rejection(
          journal.append('01OTHER', 'staged', {
            buildId: BUILD_B,
            treeHash: 'f'.repeat(64),
            reused: false,
          }),
        )
      ).message,
    ).to.match(/another transaction/);
  });

  it('starts a new transaction after an end, continuing the sequence', async () => {
    const first = await journal.begin({ ...begin, prior: null });
    await journal.append(first, 'failed', {
      during: 'stage',
      code: 'GENERATION_INVALID',
      message: 'bad',
      criteria: [],
    });
    await journal.append(first, 'end', { outcome: 'failed' });
    const second = await journal.begin(begin);
    const parsed = await journal.read();
    expect(parsed.records.map((r) => r.seq)).to.deep.equal([1, 2, 3, 4]);
    expect(lastTransaction(parsed)?.id).to.equal(second);
  });
});
