/**
 * The audit verifier as data (contract §5, §15; docs/audit-log.md): a segmented chain, where the
 * kept log may start after pruned segments; the heads an operator saw earlier; the thinning of
 * those heads.
 */
import { expect } from 'chai';
import {
  AUDIT_GENESIS,
  auditLineHash,
  auditSegmentName,
  verifyAuditChain,
  verifyAuditSegments,
  type AuditRecord,
} from '../src/index.js';
import {
  MAX_HEADS_PER_HOST,
  addSeenHead,
  parseAuditHeadHeader,
  type SeenHead,
} from '../src/client/seen-heads.js';

type Extra = Partial<Pick<AuditRecord, 'segment' | 'operation'>>;

/** Lines seq `from`..`to`, chained from `prev`; `extra` per seq. */
function lines(
  from: number,
  to: number,
  prev = AUDIT_GENESIS,
  extra: Record<number, Extra> = {},
): string[] {
  const out: string[] = [];
  for (let seq = from; seq <= to; seq += 1) {
    const line = JSON.stringify({
      seq,
      ts: '2026-01-01T00:00:00.000Z',
      prev,
      operationId: null,
      client: 'c',
      operation: 'export',
      paths: [],
      files: [],
      outcome: 'ok',
      code: null,
      detail: `record ${seq}`,
      ...extra[seq],
    });
    prev = auditLineHash(line);
    out.push(line);
  }
  return out;
}

const text = (all: readonly string[]) => `${all.join('\n')}\n`;

describe('verifyAuditChain and verifyAuditSegments', () => {
  const full = lines(1, 9);
  const hash = (seq: number) => auditLineHash(full[seq - 1] as string);

  it('a log pruned before seq 4 verifies when the newest rotation record says so', () => {
    // Records before seq 7 do not depend on what seq 7 holds: seq 3 is the same line in both.
    const withClaim = lines(1, 9, AUDIT_GENESIS, {
      7: {
        operation: 'audit.rotate',
        segment: { previous: auditSegmentName(4), retainedFromSeq: 4, retainedPrev: hash(3) },
      },
    });
    const kept = withClaim.slice(3);
    expect(verifyAuditChain(text(kept)).ok).to.equal(true);
    expect(verifyAuditChain(text(kept)).firstSeq).to.equal(4);
    // One more segment gone than the rotation says: removed.
    const cut = verifyAuditChain(text(withClaim.slice(5)));
    expect(cut.problems[0]).to.include({ kind: 'removed', line: 1 });
    // Without any rotation record, a log that does not start at seq 1 lost its beginning.
    expect(verifyAuditChain(text(full.slice(3))).problems[0]?.kind).to.equal('removed');
  });

  it('reports a log that does not contain a head seen earlier as rewritten', () => {
    const seen = [{ seq: 5, sha256: hash(5) }];
    expect(verifyAuditChain(text(full), { seen }).ok).to.equal(true);
    // A consistent chain, but another one: seq 5 is not the record seen.
    const other = rechain(full.map((line) => line.replace('"client":"c"', '"client":"d"')));
    const rewritten = verifyAuditChain(text(other), { seen });
    expect(rewritten.problems.map((p) => p.kind)).to.deep.equal(['rewritten']);
    // Cut back below a head seen: rewritten too.
    expect(verifyAuditChain(text(full.slice(0, 3)), { seen }).problems[0]?.kind).to.equal(
      'rewritten',
    );
    // A head older than the kept log cannot be checked, and is not a problem.
    const rotated = lines(1, 9, AUDIT_GENESIS, {
      8: {
        operation: 'audit.rotate',
        segment: { previous: auditSegmentName(6), retainedFromSeq: 6, retainedPrev: hash(5) },
      },
    });
    expect(
      verifyAuditChain(text(rotated.slice(5)), { seen: [{ seq: 2, sha256: hash(2) }] }).ok,
    ).to.equal(true);
  });

  it('names the segment and its line; a closed segment must hold what its name says', () => {
    const segments = [
      { name: auditSegmentName(1), text: text(full.slice(0, 4)) },
      { name: 'audit.jsonl', text: text(full.slice(4)) },
    ];
    expect(verifyAuditSegments(segments).ok).to.equal(true);
    const edited = [...full];
    edited[5] = (edited[5] as string).replace('record 6', 'record six');
    const broken = verifyAuditSegments([
      { name: auditSegmentName(1), text: text(edited.slice(0, 4)) },
      { name: 'audit.jsonl', text: text(edited.slice(4)) },
    ]);
    expect(broken.problems[0]).to.include({
      kind: 'edited',
      segment: 'audit.jsonl',
      segmentLine: 2,
    });
    const renamed = verifyAuditSegments([
      { name: auditSegmentName(2), text: text(full.slice(0, 4)) },
      { name: 'audit.jsonl', text: text(full.slice(4)) },
    ]);
    expect(renamed.problems[0]?.message).to.contain('not the seq its name says');
    const missing = verifyAuditSegments([
      { name: auditSegmentName(1), text: text(full.slice(0, 4)) },
    ]);
    expect(missing.problems.map((p) => p.message).join()).to.contain(
      'active segment audit.jsonl is missing',
    );
    const tornClosed = verifyAuditSegments([
      { name: auditSegmentName(1), text: `${text(full.slice(0, 4))}{"seq":5` },
      { name: 'audit.jsonl', text: text(full.slice(4)) },
    ]);
    expect(tornClosed.problems[0]).to.include({ kind: 'torn', segment: auditSegmentName(1) });
  });

  it('calls a NUL hole what it is', () => {
    const holed = `${text(full.slice(0, 2))}${'\u0000'.repeat(64)}${text(full.slice(2))}`;
    const result = verifyAuditChain(holed);
    expect(result.problems[0]).to.include({ kind: 'malformed', line: 3 });
    expect(result.problems[0]?.message).to.contain('NUL');
  });
});

/** Re-chains lines after an edit (what a careful rewriter does). */
function rechain(input: readonly string[]): string[] {
  let prev = AUDIT_GENESIS;
  return input.map((line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    const out = JSON.stringify({ ...record, prev });
    prev = auditLineHash(out);
    return out;
  });
}

describe('the heads an operator keeps', () => {
  const head = (seq: number): SeenHead => ({
    seq,
    sha256: seq.toString(16).padStart(64, '0'),
    seenAt: '2026-01-01T00:00:00.000Z',
    verb: 'drift',
  });

  it('parses the header a controller sends, and nothing else', () => {
    const sha = 'a'.repeat(64);
    expect(parseAuditHeadHeader(`12:${sha}`)).to.deep.equal({ seq: 12, sha256: sha });
    for (const bad of [
      undefined,
      '',
      `0:${sha}`,
      `12:${sha.toUpperCase()}`,
      `12:${sha}x`,
      `-1:${sha}`,
    ]) {
      expect(parseAuditHeadHeader(bad), String(bad)).to.equal(undefined);
    }
  });

  it('keeps the first and the newest, and a spread of the rest, within the bound', () => {
    let list: SeenHead[] = [];
    for (let seq = 1; seq <= 500; seq += 1) list = addSeenHead(list, head(seq));
    expect(list.length).to.be.at.most(MAX_HEADS_PER_HOST);
    expect(list[0]?.seq).to.equal(1);
    expect(list[list.length - 1]?.seq).to.equal(500);
    const seqs = list.map((h) => h.seq);
    expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    expect(seqs.some((seq) => seq > 100 && seq < 400)).to.equal(true);
    // The same head again is not kept twice.
    expect(addSeenHead(list, head(500))).to.have.length(list.length);
  });
});
