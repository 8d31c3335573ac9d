/** `fleet audit show`'s human form (issue 17): a header row, aligned columns, a row per line. */
import { expect } from 'chai';
import { escapeControl } from '@fleet/core';
import { renderAuditTable } from '../src/audit-table.js';
import { safeValue } from '@fleet/operator/audit/log.js';

const safe = (value: unknown) => safeValue(escapeControl, value);

const nodeRecords = [
  {
    seq: 9,
    ts: '2026-05-01T10:00:00.000Z',
    outcome: 'ok',
    operation: 'install',
    client: 'laptop',
    operationId: '01J0000000000000000000000A',
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
      'SEQ  TIME                      OUTCOME  OPERATION  CLIENT  OPERATION ID                CODE                  PATHS',
      '9    2026-05-01T10:00:00.000Z  ok       install    laptop  01J0000000000000000000000A  -                     ~/.gitconfig',
      '10   2026-05-01T10:01:00.000Z  refused  install    ci      -                           FINGERPRINT_MISMATCH  ~/.bashrc ~/.vimrc',
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

  it("the operator's log: time, verb, host, operation id, outcome, code, paths", () => {
    const lines = renderAuditTable(
      'operator',
      [
        {
          ts: '2026-05-01T10:00:00.000Z',
          verb: 'config install',
          host: 'node-01',
          operationId: '01J0000000000000000000000A',
          outcome: 'ok',
          paths: ['~/.gitconfig'],
        },
      ],
      safe,
    );
    expect(lines).to.deep.equal([
      'TIME                      VERB            HOST     OPERATION ID                OUTCOME  CODE  PATHS',
      '2026-05-01T10:00:00.000Z  config install  node-01  01J0000000000000000000000A  ok       -     ~/.gitconfig',
    ]);
  });

  it('colours the outcome cell only, after the widths are measured', () => {
    const lines = renderAuditTable('node', nodeRecords, safe, (outcome) => `<${outcome}>`);
    expect(lines[1]).to.contain('  <ok>       install');
    expect(lines[2]).to.contain('  <refused>  install');
  });
});
