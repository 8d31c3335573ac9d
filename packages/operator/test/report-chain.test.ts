/**
 * The chain of a schedule's reports, pure (docs/scheduled-reports.md "Reports as evidence"): the
 * link the next report carries, and the verdict over a reports folder held against the kept head
 * — as a table of folders: intact, a report deleted, edited, truncated, two swapped, the newest
 * deleted, a deleted name taken by a later report, a report added past the head, one no link
 * leads to, the head missing, a companion changed, and reports from before the chain.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { ReportChain } from '@fleet/core';
import {
  chainVerdictLine,
  nextLink,
  verifyReportChain,
  type ChainHead,
  type ChainProblemKind,
  type ChainStatus,
  type ReportEntry,
} from '../src/schedule/chain.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const MD = sha('# report');
const HTML = sha('<html></html>');
const day = (n: number) => `2026-12-0${n}T06:00:00.000Z`;
const fileOf = (n: number) => `reports/drift/2026-12-0${n}/drift.json`;

/** A chain of `count` drift reports, each the next link of the one before, as written. */
function chainOf(count: number): ReportEntry[] {
  const entries: ReportEntry[] = [];
  for (let n = 1; n <= count; n += 1) {
    const before = entries.at(-1);
    const chain: ReportChain = {
      schedule: 'drift',
      seq: n,
      previous: before ? { file: before.file, sha256: before.sha256 } : null,
      anchor: before ? 'head' : 'start',
      companions: { md: MD, html: HTML },
    };
    entries.push({
      file: fileOf(n),
      sha256: sha(`report ${n} ${JSON.stringify(chain)}`),
      generatedAt: day(n),
      chain,
      companions: { md: MD, html: HTML },
    });
  }
  return entries;
}

const headOf = (entry: ReportEntry | undefined): ChainHead => {
  if (entry?.chain == null) throw new Error('no chained entry');
  return {
    seq: entry.chain.seq,
    file: entry.file,
    sha256: entry.sha256,
    generatedAt: day(entry.chain.seq),
  };
};

/** A report written before chains existed (or by hand with --report-dir): no link. */
const unchained = (n: number): ReportEntry => ({
  file: `reports/drift/2026-11-2${n}/drift.json`,
  sha256: sha(`old ${n}`),
  generatedAt: `2026-11-2${n}T06:00:00.000Z`,
  chain: null,
  companions: {},
});

interface Case {
  readonly name: string;
  /** The folder as found, and the head the state directory keeps. */
  readonly folder: () => { entries: ReportEntry[]; head: ChainHead | null };
  readonly status: ChainStatus;
  readonly reports: number;
  /** The first problem: its kind and file. */
  readonly first?: { readonly kind: ChainProblemKind; readonly file: string; readonly seq: number };
  readonly line: RegExp;
}

const three = chainOf(3);
const cases: Case[] = [
  {
    name: 'three reports as written: intact since the first one',
    folder: () => ({ entries: chainOf(3), head: headOf(three[2]) }),
    status: 'intact',
    reports: 3,
    line: /^intact {2}3 reports since 2026-12-01T06:00:00.000Z, head seq 3 \(reports\/drift\/2026-12-03\/drift.json\)$/,
  },
  {
    name: 'the middle report deleted: the link to it names the file',
    folder: () => ({
      entries: chainOf(3).filter((e) => e.file !== fileOf(2)),
      head: headOf(three[2]),
    }),
    status: 'broken',
    reports: 1,
    first: { kind: 'missing', file: fileOf(2), seq: 2 },
    line: /^BROKEN {2}1 report followed/,
  },
  {
    name: 'the first report edited',
    folder: () => ({
      entries: chainOf(3).map((e) => (e.file === fileOf(1) ? { ...e, sha256: sha('edited') } : e)),
      head: headOf(three[2]),
    }),
    status: 'broken',
    reports: 2,
    first: { kind: 'edited', file: fileOf(1), seq: 1 },
    line: /^BROKEN/,
  },
  {
    name: 'the newest report truncated: it no longer matches the head',
    folder: () => ({
      entries: chainOf(3).map((e) => (e.file === fileOf(3) ? { ...e, sha256: sha('cut') } : e)),
      head: headOf(three[2]),
    }),
    status: 'broken',
    reports: 0,
    first: { kind: 'edited', file: fileOf(3), seq: 3 },
    line: /^BROKEN {2}0 reports followed/,
  },
  {
    name: 'two reports swapped (reordered): the link finds its report at the other name',
    folder: () => {
      const [a, b, c] = chainOf(3) as [ReportEntry, ReportEntry, ReportEntry];
      return {
        entries: [{ ...b, file: a.file }, { ...a, file: b.file }, c],
        head: headOf(three[2]),
      };
    },
    status: 'broken',
    reports: 1,
    first: { kind: 'reordered', file: fileOf(2), seq: 2 },
    line: /^BROKEN/,
  },
  {
    name: 'the newest report deleted (the chain truncated): the kept head names it',
    folder: () => ({ entries: chainOf(2), head: headOf(three[2]) }),
    status: 'broken',
    reports: 0,
    first: { kind: 'missing', file: fileOf(3), seq: 3 },
    line: /^BROKEN/,
  },
  {
    name: 'the newest report deleted, then the next run took its free name: still a deletion',
    folder: () => {
      const entries = chainOf(3);
      const deleted = entries[2] as ReportEntry;
      const chain: ReportChain = {
        schedule: 'drift',
        seq: 4,
        previous: { file: deleted.file, sha256: deleted.sha256 },
        anchor: 'head',
        companions: { md: MD, html: HTML },
      };
      const taken = { ...deleted, chain, sha256: sha('seq 4'), generatedAt: day(4) };
      return {
        entries: [entries[0] as ReportEntry, entries[1] as ReportEntry, taken],
        head: headOf(taken),
      };
    },
    status: 'broken',
    reports: 1,
    first: { kind: 'missing', file: fileOf(3), seq: 3 },
    line: /^BROKEN {2}1 report followed, head seq 4/,
  },
  {
    name: 'a report added past the kept head: unanchored, named',
    folder: () => ({ entries: chainOf(4), head: headOf(three[2]) }),
    status: 'unanchored',
    reports: 3,
    first: { kind: 'head-stale', file: fileOf(4), seq: 4 },
    line: /^UNANCHORED {2}3 reports since 2026-12-01/,
  },
  {
    name: 'no head kept: the newest report is followed, and the missing head flagged',
    folder: () => ({ entries: chainOf(3), head: null }),
    status: 'unanchored',
    reports: 3,
    first: { kind: 'head-missing', file: fileOf(3), seq: 3 },
    line: /^UNANCHORED {2}3 reports since 2026-12-01/,
  },
  {
    name: 'a chained report no link leads to (added beside the chain)',
    folder: () => {
      const entries = chainOf(3);
      const stray = {
        ...(entries[1] as ReportEntry),
        file: 'reports/drift/2026-12-02/drift-2.json',
        sha256: sha('stray'),
      };
      return { entries: [...entries, stray], head: headOf(three[2]) };
    },
    status: 'broken',
    reports: 3,
    first: { kind: 'orphan', file: 'reports/drift/2026-12-02/drift-2.json', seq: 2 },
    line: /^BROKEN/,
  },
  {
    name: "a report's Markdown edited: its JSON recorded the companion's sha256",
    folder: () => ({
      entries: chainOf(3).map((e) =>
        e.file === fileOf(2) ? { ...e, companions: { md: sha('x'), html: HTML } } : e,
      ),
      head: headOf(three[2]),
    }),
    status: 'broken',
    reports: 3,
    first: { kind: 'edited', file: 'reports/drift/2026-12-02/drift.md', seq: 2 },
    line: /^BROKEN/,
  },
  {
    name: 'reports from before the chain are counted, never broken',
    folder: () => ({
      entries: [unchained(1), unchained(2), ...chainOf(2)],
      head: headOf(three[1]),
    }),
    status: 'intact',
    reports: 2,
    line: /^intact {2}2 reports since 2026-12-01T06:00:00.000Z, .*; 2 before the chain$/,
  },
  {
    name: 'only reports from before the chain, no head: nothing to check yet',
    folder: () => ({ entries: [unchained(1)], head: null }),
    status: 'empty',
    reports: 0,
    line: /^no chained reports yet; 1 before the chain$/,
  },
];

describe('report chain: the verdict over a reports folder and its kept head', () => {
  for (const c of cases) {
    it(c.name, () => {
      const { entries, head } = c.folder();
      const verdict = verifyReportChain('drift', entries, head);
      expect(verdict.status, JSON.stringify(verdict.problems)).to.equal(c.status);
      expect(verdict.reports).to.equal(c.reports);
      const first = verdict.problems[0];
      expect(first && { kind: first.kind, file: first.file, seq: first.seq }).to.deep.equal(
        c.first,
      );
      expect(chainVerdictLine(verdict)).to.match(c.line);
    });
  }

  it('a version chain does not count drift reports as its own', () => {
    const verdict = verifyReportChain('version', chainOf(2), null);
    expect(verdict.status).to.equal('empty');
  });
});

describe('report chain: the link the next report carries', () => {
  const companions = { md: MD, html: HTML };

  it('the first report of a chain starts it at seq 1, with no previous', () => {
    expect(nextLink('drift', null, [], companions)).to.deep.equal({
      schedule: 'drift',
      seq: 1,
      previous: null,
      anchor: 'start',
      companions,
    });
  });

  it('the next report links to the kept head, even when the folder lost it', () => {
    const head = headOf(three[2]);
    const link = nextLink('drift', head, chainOf(1), companions);
    expect(link).to.include({ seq: 4, anchor: 'head' });
    expect(link.previous).to.deep.equal({ file: head.file, sha256: head.sha256 });
  });

  it('without a kept head it links to the newest chained report found, and says so', () => {
    const entries = chainOf(3);
    const link = nextLink('drift', null, [unchained(1), ...entries], companions);
    expect(link).to.include({ seq: 4, anchor: 'folder' });
    expect(link.previous).to.deep.equal({ file: fileOf(3), sha256: entries[2]?.sha256 });
    // Verified later, such a link is a note, not a break.
    const written: ReportEntry = {
      file: 'reports/drift/2026-12-04/drift.json',
      sha256: sha('four'),
      generatedAt: day(4),
      chain: link,
      companions,
    };
    const verdict = verifyReportChain('drift', [...entries, written], headOf(written));
    expect(verdict.status).to.equal('intact');
    expect(verdict.notes).to.have.length(1);
    expect(verdict.notes[0]).to.match(/chained without a kept head/);
  });
});
