/** `fleet audit show`'s human form (issue 17): a header row, aligned columns, a row per line. */
import { expect } from 'chai';
import { escapeControl } from '@fleet/core';
import { commitCell, renderAuditTable } from '../src/audit-table.js';
import { safeValue } from '@fleet/operator/audit/log.js';

const safe = (value: unknown) => safeValue(escapeControl, value);
const COMMIT = 'c0ffee0123456789abcdef0123456789abcdef01';

const nodeRecords = [
  {
    seq: 9,
    ts: '2026-05-01T10:00:00.000Z',
    outcome: 'ok',
    operation: 'install',
    client: 'laptop',
    operationId: '01J0000000000000000000000A',
    repoCommit: COMMIT,
    paths: ['~/.gitconfig'],
  },
  {
    seq: 10,
    ts: '2026-05-01T10:01:00.000Z',
    outcome: 'refused',
    operation: 'install',
    client: 'ci',
    code: 'FINGERPRINT_MISMATCH',
    paths: ['~/.bashrc', '~/.vimrc'],
  },
];

describe('audit show: the table', () => {
  it("a node's log: a header row and columns aligned to their widest cell", () => {
    expect(renderAuditTable('node', nodeRecords, safe)).to.deep.equal([
      'SEQ  TIME                      OUTCOME  OPERATION  CLIENT  OPERATION ID                CODE                  COMMIT        PATHS',
      '9    2026-05-01T10:00:00.000Z  ok       install    laptop  01J0000000000000000000000A  -                     c0ffee012345  ~/.gitconfig',
      '10   2026-05-01T10:01:00.000Z  refused  install    ci      -                           FINGERPRINT_MISMATCH  -             ~/.bashrc ~/.vimrc',
    ]);
  });

  it('through --host: the host first; a line that is not a record keeps its place, escaped', () => {
    const records = [
      { host: 'node-01', ...nodeRecords[0] },
      { host: 'node-01', malformed: true, line: 10, raw: '{"seq":\u001b[2J' },
    ];
    const lines = renderAuditTable('hosts', records, safe);
    expect(lines[0]).to.match(/^HOST {5}SEQ {6}TIME/);
    expect(lines[2]).to.match(/^node-01 {2}line 10 +not a record: \{"seq":\\x1b\[2J$/);
    expect(lines.join('\n')).to.not.contain('\u001b');
  });

  it("the operator's log: time, verb, host, operation id, outcome, code, commit, paths", () => {
    const lines = renderAuditTable(
      'operator',
      [
        {
          ts: '2026-05-01T10:00:00.000Z',
          verb: 'config install',
          host: 'node-01',
          operationId: '01J0000000000000000000000A',
          outcome: 'ok',
          repoCommit: COMMIT,
          paths: ['~/.gitconfig'],
        },
      ],
      safe,
    );
    expect(lines).to.deep.equal([
      'TIME                      VERB            HOST     OPERATION ID                OUTCOME  CODE  COMMIT        PATHS',
      '2026-05-01T10:00:00.000Z  config install  node-01  01J0000000000000000000000A  ok       -     c0ffee012345  ~/.gitconfig',
    ]);
  });

  describe('the COMMIT cell: 12 digits of a full id, "-" for none, anything else whole and escaped', () => {
    const cases: readonly (readonly [string, unknown, string])[] = [
      ['a sha-1 commit id', COMMIT, 'c0ffee012345'],
      ['a sha-256 commit id', `${COMMIT}${'0'.repeat(24)}`, 'c0ffee012345'],
      ['null (the verb read no commit)', null, '-'],
      ['absent (an older record)', undefined, '-'],
      ['an abbreviation, shown as it is', 'c0ffee0', 'c0ffee0'],
      ['free text, shown whole', 'not a commit at all', 'not a commit at all'],
      ['control characters, escaped', '\u001b[2Jx', '\\x1b[2Jx'],
      ['a number', 42, '42'],
    ];
    for (const [what, value, shown] of cases) {
      it(what, () => {
        expect(commitCell(value, safe)).to.equal(shown);
      });
    }
  });

  it('colours the outcome cell only, after the widths are measured', () => {
    const lines = renderAuditTable('node', nodeRecords, safe, (outcome) => `<${outcome}>`);
    expect(lines[1]).to.contain('  <ok>       install');
    expect(lines[2]).to.contain('  <refused>  install');
  });
});
