/**
 * What `fleet audit show|verify` do with a node's audit log on the operator's side (contract §5,
 * §7, §15; docs/audit-log.md), as tables: the verdict of a log — which record each problem is
 * about, a torn tail, the trusted head and the heads seen earlier — the exit code over many
 * hosts, a host that could not be read, text made safe for a terminal (docs/reliability.md, case
 * 38 "Log and terminal injection"), lines shown as records, and a node home's segments read in
 * order. Chains are built here with core's line hash; a node home is a temporary directory.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  auditLineHash,
  escapeControl,
  type AuditHead,
  type ErrorCode,
  type ExitCode,
} from '@fleet/core';
import {
  failedVerdict,
  nodeStateDir,
  parseLines,
  readHomeLog,
  safeText,
  safeValue,
  splitLog,
  verifyExitCode,
  verifyLog,
  verdictWord,
  type HostVerdict,
  type NodeLog,
  type VerifyProblem,
} from '../src/audit/log.js';
import { chain } from './audit-chain.js';

const full = chain(4);
const at = (seq: number): string => full[seq - 1] ?? '';
const headOf = (line: string, seq: number): AuditHead => ({ seq, sha256: auditLineHash(line) });
const edited = (seq: number): string => at(seq).replace(`record ${seq}`, 'record X');

describe('audit verify: the verdict of one log, problem by problem', () => {
  interface Case {
    readonly name: string;
    readonly lines: readonly string[];
    readonly log?: Partial<NodeLog>;
    readonly seen?: readonly AuditHead[];
    readonly records: number;
    /** The head the verdict reports: the last record's seq and line. */
    readonly head: AuditHead | null;
    readonly problems: readonly VerifyProblem[];
  }
  const cases: Case[] = [
    {
      name: 'an intact chain',
      lines: full,
      records: 4,
      head: headOf(at(4), 4),
      problems: [],
    },
    {
      name: 'an intact chain that reaches the trusted head',
      lines: full,
      log: { head: headOf(at(4), 4) },
      records: 4,
      head: headOf(at(4), 4),
      problems: [],
    },
    {
      name: 'an empty log with nothing trusted',
      lines: [],
      records: 0,
      head: null,
      problems: [],
    },
    {
      name: 'an edited record is named by its own seq',
      lines: [at(1), edited(2), at(3), at(4)],
      records: 4,
      head: headOf(at(4), 4),
      problems: [
        {
          seq: 2,
          line: 2,
          kind: 'edited',
          message: "line 2 (seq 2) was changed: its hash is not line 3's prev",
        },
      ],
    },
    {
      name: 'a removed record is named by the seq that is missing',
      lines: [at(1), at(2), at(4)],
      records: 3,
      head: headOf(at(4), 4),
      problems: [{ seq: 3, line: 3, kind: 'removed', message: 'record 3 missing before line 3' }],
    },
    {
      name: 'two removed records: the first one missing',
      lines: [at(1), at(4)],
      records: 2,
      head: headOf(at(4), 4),
      problems: [
        { seq: 2, line: 2, kind: 'removed', message: 'records 2, 3 missing before line 2' },
      ],
    },
    {
      name: 'the first record removed: seq 1',
      lines: [at(2), at(3), at(4)],
      records: 3,
      head: headOf(at(4), 4),
      problems: [
        {
          seq: 1,
          line: 1,
          kind: 'removed',
          message: 'records 1 missing before line 1: no rotation record says they were pruned',
        },
      ],
    },
    {
      name: 'a cut tail is seen only against the trusted head: the seq after the last kept',
      lines: [at(1), at(2), at(3)],
      log: { head: headOf(at(4), 4) },
      records: 3,
      head: headOf(at(3), 3),
      problems: [
        {
          seq: 4,
          line: 3,
          kind: 'removed',
          message: 'the log ends at seq 3, before the trusted head (seq 4)',
        },
      ],
    },
    {
      name: 'a cut tail without a trusted head reads as a shorter log (intact)',
      lines: [at(1), at(2), at(3)],
      records: 3,
      head: headOf(at(3), 3),
      problems: [],
    },
    {
      name: 'an emptied log against the trusted head: seq 1, before any line',
      lines: [],
      log: { head: headOf(at(2), 2) },
      records: 0,
      head: null,
      problems: [
        {
          seq: 1,
          line: 0,
          kind: 'removed',
          message: 'the log ends at seq 0, before the trusted head (seq 2)',
        },
      ],
    },
    {
      name: 'the last record edited, against the trusted head',
      lines: [at(1), at(2), at(3), edited(4)],
      log: { head: headOf(at(4), 4) },
      records: 4,
      head: headOf(edited(4), 4),
      problems: [
        {
          seq: 4,
          line: 4,
          kind: 'edited',
          message: 'the record with seq 4 does not hash to the trusted head',
        },
      ],
    },
    {
      name: 'the last record edited, against a head seen earlier: rewritten',
      lines: [at(1), at(2), at(3), edited(4)],
      seen: [headOf(at(4), 4)],
      records: 4,
      head: headOf(edited(4), 4),
      problems: [
        {
          seq: 4,
          line: 4,
          kind: 'rewritten',
          message: 'the record with seq 4 is not the one seen earlier: the log was rewritten',
        },
      ],
    },
    {
      name: 'a log shorter than a head seen earlier: rewritten at its last line',
      lines: [at(1), at(2), at(3)],
      seen: [headOf(at(4), 4)],
      records: 3,
      head: headOf(at(3), 3),
      problems: [
        {
          seq: 3,
          line: 3,
          kind: 'rewritten',
          message: 'the log ends at seq 3, before a head seen earlier (seq 4)',
        },
      ],
    },
    {
      name: 'two records swapped: each out-of-order line named by its own seq',
      lines: [at(1), at(3), at(2), at(4)],
      records: 4,
      head: headOf(at(4), 4),
      problems: [
        { seq: 3, line: 2, kind: 'reordered', message: 'line 2 (seq 3) is out of order' },
        {
          seq: 2,
          line: 3,
          kind: 'reordered',
          message: 'line 3 (seq 2) is out of order or repeated',
        },
        { seq: 4, line: 4, kind: 'reordered', message: 'line 4 (seq 4) is out of order' },
      ],
    },
    {
      name: 'a line that is not JSON has no seq; the record it replaced is missing',
      lines: [at(1), 'not json', at(3), at(4)],
      records: 3,
      head: headOf(at(4), 4),
      problems: [
        { seq: null, line: 2, kind: 'malformed', message: 'line 2 is not JSON' },
        { seq: 2, line: 3, kind: 'removed', message: 'record 2 missing before line 3' },
      ],
    },
    {
      name: 'a line that is JSON but not a record says nothing of seqs: record 2 is missing',
      lines: [at(1), '{"seq":2}', at(3), at(4)],
      records: 3,
      head: headOf(at(4), 4),
      problems: [
        { seq: null, line: 2, kind: 'malformed', message: 'line 2 is not an audit record' },
        { seq: 2, line: 3, kind: 'removed', message: 'record 2 missing before line 3' },
      ],
    },
    {
      name: 'a torn tail read through a controller is one more line, without a seq',
      lines: full,
      log: { torn: true },
      records: 4,
      head: headOf(at(4), 4),
      problems: [
        { seq: null, line: 5, kind: 'torn', message: 'line 5 is incomplete (no newline)' },
      ],
    },
    {
      name: 'read from a home: the segments are verified, and a problem names its segment',
      lines: [at(1), at(2), at(4)],
      log: { segments: [{ name: 'audit.jsonl', text: `${[at(1), at(2), at(4)].join('\n')}\n` }] },
      records: 3,
      head: headOf(at(4), 4),
      problems: [
        {
          seq: 3,
          line: 3,
          kind: 'removed',
          message: 'record 3 missing before line 3',
          segment: 'audit.jsonl',
          segmentLine: 3,
        },
      ],
    },
    {
      name: 'read from a home: the segments verifier reports the torn active segment',
      lines: [at(1), at(2), at(3)],
      log: {
        torn: true,
        segments: [
          {
            name: 'audit.jsonl',
            text: `${[at(1), at(2), at(3)].join('\n')}\n${at(4).slice(0, 20)}`,
          },
        ],
      },
      records: 3,
      head: headOf(at(3), 3),
      problems: [
        {
          seq: null,
          line: 4,
          kind: 'torn',
          message: 'line 4 is incomplete (no newline)',
          segment: 'audit.jsonl',
          segmentLine: 4,
        },
      ],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const log: NodeLog = { lines: c.lines, firstLine: 1, torn: false, ...c.log };
      const broken = c.problems.length > 0;
      expect(verifyLog('node-01', log, c.seen)).to.deep.equal({
        host: 'node-01',
        status: broken ? 'broken' : 'intact',
        ok: !broken,
        records: c.records,
        head: c.head,
        problems: c.problems,
      });
    });
  }
});

describe('audit verify: the exit code over many hosts (contract §7)', () => {
  const verdict = (status: HostVerdict['status'], exitCode?: number): HostVerdict => ({
    host: `h-${status}`,
    status,
    ok: status === 'intact',
    records: 0,
    head: null,
    problems: [],
    ...(exitCode === undefined ? {} : { error: { code: 'X', message: 'm', exitCode } }),
  });
  const cases: { name: string; verdicts: HostVerdict[]; exit: number }[] = [
    { name: 'no host', verdicts: [], exit: 0 },
    { name: 'every chain intact', verdicts: [verdict('intact'), verdict('intact')], exit: 0 },
    { name: 'a broken chain', verdicts: [verdict('intact'), verdict('broken')], exit: 6 },
    {
      name: 'a broken chain wins over an unreachable host listed before it',
      verdicts: [verdict('unreachable', 5), verdict('broken')],
      exit: 6,
    },
    {
      name: 'else the first failed host: unreachable',
      verdicts: [verdict('intact'), verdict('unreachable', 5), verdict('error', 4)],
      exit: 5,
    },
    {
      name: 'else the first failed host: refused',
      verdicts: [verdict('error', 4), verdict('unreachable', 5)],
      exit: 4,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: exit ${c.exit}`, () => {
      expect(verifyExitCode(c.verdicts)).to.equal(c.exit);
    });
  }
});

describe('audit verify: a host that could not be read', () => {
  const cases: { code: ErrorCode; exitCode: ExitCode; status: HostVerdict['status'] }[] = [
    { code: 'HOST_UNREACHABLE', exitCode: 5, status: 'unreachable' },
    { code: 'REQUEST_TIMEOUT', exitCode: 5, status: 'unreachable' },
    { code: 'HOST_UNREACHABLE', exitCode: 1, status: 'unreachable' },
    { code: 'AUTH_INVALID', exitCode: 4, status: 'error' },
    { code: 'INTERNAL', exitCode: 1, status: 'error' },
  ];
  for (const c of cases) {
    it(`${c.code} (exit ${c.exitCode}) is ${c.status}`, () => {
      expect(
        failedVerdict('node-02', { code: c.code, message: 'why', exitCode: c.exitCode }),
      ).to.deep.equal({
        host: 'node-02',
        status: c.status,
        ok: false,
        records: 0,
        head: null,
        problems: [],
        error: { code: c.code, message: 'why', exitCode: c.exitCode },
      });
    });
  }
});

describe('audit show: text from a log made safe for a terminal (docs/reliability.md case 38)', () => {
  const cases: { name: string; text: string; shown: string }[] = [
    { name: 'plain text is unchanged', text: 'config.install ok', shown: 'config.install ok' },
    { name: 'non-ASCII letters are unchanged', text: 'é ü 漢', shown: 'é ü 漢' },
    { name: 'a newline cannot forge a line', text: 'a\nb', shown: 'a\\nb' },
    { name: 'CRLF', text: 'a\r\nb', shown: 'a\\x0d\\nb' },
    { name: 'a tab', text: 'a\tb', shown: 'a\\tb' },
    {
      name: 'an ANSI colour sequence',
      text: '\u001b[31mred\u001b[0m',
      shown: '\\x1b[31mred\\x1b[0m',
    },
    { name: 'BEL', text: 'ring\u0007', shown: 'ring\\x07' },
    { name: 'DEL', text: 'x\u007f', shown: 'x\\x7f' },
    { name: 'a C1 control (NEL)', text: 'x\u0085', shown: 'x\\x85' },
    { name: 'a right-to-left override', text: '\u202eevil', shown: '\\u202eevil' },
    { name: 'bidirectional isolates', text: '\u2066x\u2069', shown: '\\u2066x\\u2069' },
    { name: 'LRM and the Arabic letter mark', text: '\u200e\u061c', shown: '\\u200e\\u061c' },
    {
      name: 'Unicode line and paragraph separators',
      text: '\u2028\u2029',
      shown: '\\u2028\\u2029',
    },
    { name: 'a backslash-n already in the text stays as it is', text: '\\n', shown: '\\n' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(safeText(escapeControl, c.text)).to.equal(c.shown);
    });
  }

  const values: { value: unknown; shown: string }[] = [
    { value: null, shown: '' },
    { value: undefined, shown: '' },
    { value: 0, shown: '0' },
    { value: 1.5, shown: '1.5' },
    { value: false, shown: 'false' },
    { value: 'two\nlines', shown: 'two\\nlines' },
    { value: ['a', 1], shown: '["a",1]' },
    { value: { detail: '\u001b' }, shown: '{"detail":"\\u001b"}' },
  ];
  for (const c of values) {
    it(`the value ${JSON.stringify(c.value) ?? 'undefined'} is shown as ${JSON.stringify(c.shown)}`, () => {
      expect(safeValue(escapeControl, c.value)).to.equal(c.shown);
    });
  }
});

describe('audit show: lines as records', () => {
  const cases: { line: string; record: Record<string, unknown> }[] = [
    { line: '{"seq":1,"outcome":"ok"}', record: { source: 'node-01', seq: 1, outcome: 'ok' } },
    { line: 'not json', record: { source: 'node-01', line: 8, malformed: true, raw: 'not json' } },
    { line: '', record: { source: 'node-01', line: 8, malformed: true, raw: '' } },
    { line: '[1,2]', record: { source: 'node-01', line: 8, malformed: true, raw: '[1,2]' } },
    { line: 'null', record: { source: 'node-01', line: 8, malformed: true, raw: 'null' } },
    { line: '"text"', record: { source: 'node-01', line: 8, malformed: true, raw: '"text"' } },
    { line: '42', record: { source: 'node-01', line: 8, malformed: true, raw: '42' } },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.line)} at line 8`, () => {
      expect(parseLines([c.line], 8, { source: 'node-01' })).to.deep.equal([c.record]);
    });
  }

  it('numbers each line from the first line asked for', () => {
    expect(parseLines(['{"seq":7}', 'x', 'y'], 7).map((r) => r['line'] ?? r['seq'])).to.deep.equal([
      7, 8, 9,
    ]);
  });

  const splits: { text: string; lines: string[]; tail: string }[] = [
    { text: '', lines: [], tail: '' },
    { text: 'a\n', lines: ['a'], tail: '' },
    { text: 'a\nb', lines: ['a'], tail: 'b' },
    { text: 'a\nb\n', lines: ['a', 'b'], tail: '' },
    { text: '\n', lines: [''], tail: '' },
    { text: 'a\n\nb\n', lines: ['a', '', 'b'], tail: '' },
  ];
  for (const c of splits) {
    it(`splits ${JSON.stringify(c.text)} into complete lines and a tail`, () => {
      expect(splitLog(c.text)).to.deep.equal({ lines: c.lines, tail: c.tail });
    });
  }
});

describe("audit show|verify --home: a node home's log read directly", () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-audit-log-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  interface Case {
    readonly name: string;
    /** Files in `<home>/.local/state/fleet` (`null`: not even the directory). */
    readonly files: Record<string, string> | null;
    readonly lines: string[];
    readonly tail: string;
    readonly segments: string[];
    readonly head?: AuditHead;
  }
  const head = { seq: 6, sha256: 'ab'.repeat(32) };
  const cases: Case[] = [
    { name: 'no state directory: an empty log', files: null, lines: [], tail: '', segments: [] },
    { name: 'an empty state directory', files: {}, lines: [], tail: '', segments: [] },
    {
      name: 'closed segments by their first seq, then the active one; other files ignored',
      files: {
        'audit.000000000003.jsonl': 'c\nd\n',
        'audit.jsonl': 'e\n',
        'audit.000000000001.jsonl': 'a\nb\n',
        'audit.jsonl.next': 'zz\n',
        'audit-sealed.jsonl': 'yy\n',
      },
      lines: ['a', 'b', 'c', 'd', 'e'],
      tail: '',
      segments: ['audit.000000000001.jsonl', 'audit.000000000003.jsonl', 'audit.jsonl'],
    },
    {
      name: 'the active segment torn: its tail kept apart',
      files: { 'audit.jsonl': 'a\nb\n{"seq":3' },
      lines: ['a', 'b'],
      tail: '{"seq":3',
      segments: ['audit.jsonl'],
    },
    {
      name: "the controller's recorded head",
      files: { 'audit.jsonl': 'a\n', 'audit.head.json': JSON.stringify(head) },
      lines: ['a'],
      tail: '',
      segments: ['audit.jsonl'],
      head,
    },
    {
      name: 'a head file with seq 0 is no head',
      files: { 'audit.jsonl': 'a\n', 'audit.head.json': '{"seq":0,"sha256":"ab"}' },
      lines: ['a'],
      tail: '',
      segments: ['audit.jsonl'],
    },
    {
      name: 'a head file with a string seq is no head',
      files: { 'audit.jsonl': 'a\n', 'audit.head.json': '{"seq":"6","sha256":"ab"}' },
      lines: ['a'],
      tail: '',
      segments: ['audit.jsonl'],
    },
    {
      name: 'a head file that is not JSON is no head',
      files: { 'audit.jsonl': 'a\n', 'audit.head.json': 'seq 6' },
      lines: ['a'],
      tail: '',
      segments: ['audit.jsonl'],
    },
  ];

  cases.forEach((c, index) => {
    it(c.name, async () => {
      const home = join(root, `home-${index}`);
      await mkdir(home);
      if (c.files !== null) {
        const dir = nodeStateDir(home);
        await mkdir(dir, { recursive: true });
        for (const [name, text] of Object.entries(c.files)) await writeFile(join(dir, name), text);
      }
      const log = await readHomeLog(home);
      expect({
        path: log.path,
        lines: log.lines,
        firstLine: log.firstLine,
        torn: log.torn,
        tail: log.tail,
        segments: (log.segments ?? []).map((segment) => segment.name),
        head: log.head,
      }).to.deep.equal({
        path: join(home, '.local', 'state', 'fleet', 'audit.jsonl'),
        lines: c.lines,
        firstLine: 1,
        torn: c.tail !== '',
        tail: c.tail,
        segments: c.segments,
        head: c.head,
      });
    });
  });
});

describe('a log whose oldest records were rotated out', () => {
  /** Seqs 1–5 pruned: the kept log starts with the rotation record (seq 6) that says so. */
  function rotatedLog(): { kept: string[]; pruned: string[] } {
    const pruned = chain(5);
    const retainedPrev = auditLineHash(pruned[4] as string);
    const rotation = JSON.stringify({
      seq: 6,
      ts: '2026-05-02T08:00:00.000Z',
      prev: retainedPrev,
      operationId: null,
      client: null,
      operation: 'audit.rotate',
      paths: [],
      files: [],
      outcome: 'ok',
      code: null,
      detail: 'segment audit.000000000001.jsonl closed at seq 5',
      segment: { previous: 'audit.000000000001.jsonl', retainedFromSeq: 6, retainedPrev },
    });
    const next = JSON.stringify({
      seq: 7,
      ts: '2026-05-02T08:00:01.000Z',
      prev: auditLineHash(rotation),
      operationId: null,
      client: 'tok_1',
      operation: 'export',
      paths: [],
      files: [],
      outcome: 'ok',
      code: null,
      detail: 'record 7',
    });
    return { kept: [rotation, next], pruned };
  }
  const logOf = (lines: string[]): NodeLog => ({ lines, firstLine: 1, torn: false });

  it('says which records were rotated out and since when, never a bare intact', () => {
    const verdict = verifyLog('node-01', logOf(rotatedLog().kept));
    expect(verdict.ok).to.equal(true);
    expect(verdict.rotated).to.deep.equal({
      fromSeq: 1,
      toSeq: 5,
      since: '2026-05-02T08:00:00.000Z',
    });
    expect(verdictWord(verdict)).to.equal('intact (rotated: 1–5, since 2026-05-02T08:00:00.000Z)');
  });

  it('flags a head the operator saw that is older than the kept log, instead of skipping it', () => {
    const { kept, pruned } = rotatedLog();
    const old: AuditHead = { seq: 2, sha256: auditLineHash(pruned[1] as string) };
    const verdict = verifyLog('node-01', logOf(kept), [old]);
    expect(verdict.unchecked).to.deep.equal([old]);
    expect(verdictWord(verdict)).to.match(
      /1 head\(s\) you saw are older than the kept log .*seq 2/,
    );
  });

  it('reads a log that starts at seq 1 as plainly intact', () => {
    const verdict = verifyLog('node-01', logOf(full));
    expect(verdictWord(verdict)).to.equal('intact');
  });
});
