/**
 * `fleet audit show`'s human form: a table with a header row and aligned columns (contract §7:
 * human output is tables), one record a row. A line that is not a record keeps its place in
 * the log's order: its row names the line number and shows the line, escaped.
 */
import { renderTable } from './table.js';

type Safe = (value: unknown) => string;
type AuditRecord = Record<string, unknown>;

/** Which log the records come from: a node's (its home, or through `--host`) or the operator's. */
export type AuditLogKind = 'node' | 'hosts' | 'operator';

const NODE_HEADER = [
  'SEQ',
  'TIME',
  'OUTCOME',
  'OPERATION',
  'CLIENT',
  'OPERATION ID',
  'CODE',
  'COMMIT',
  'PATHS',
];
const OPERATOR_HEADER = [
  'TIME',
  'VERB',
  'HOST',
  'OPERATION ID',
  'OUTCOME',
  'CODE',
  'COMMIT',
  'PATHS',
];

/** How many hex digits of a commit the table shows (as the other verbs print one: 12). */
const SHORT_COMMIT = 12;

/**
 * The COMMIT cell (contract §8.4: the fleet repository commit a write was rendered from): a full
 * commit id shortened to {@link SHORT_COMMIT} digits — `--json` keeps it whole —, `-` when the
 * record names none. Anything else in that field (a record not written by fleet) is shown whole,
 * escaped: shortening it could hide what it says.
 */
export function commitCell(value: unknown, safe: Safe): string {
  if (value === undefined || value === null) return '-';
  if (typeof value === 'string' && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(value))
    return value.slice(0, SHORT_COMMIT);
  return safe(value);
}

function paths(record: AuditRecord, safe: Safe): string {
  return Array.isArray(record['paths']) ? (record['paths'] as unknown[]).map(safe).join(' ') : '';
}

function nodeRow(record: AuditRecord, safe: Safe): string[] {
  return [
    safe(record['seq']),
    safe(record['ts']),
    safe(record['outcome']),
    safe(record['operation']),
    safe(record['client'] ?? '-'),
    safe(record['operationId'] ?? '-'),
    safe(record['code'] ?? '-'),
    commitCell(record['repoCommit'], safe),
    paths(record, safe),
  ];
}

function operatorRow(record: AuditRecord, safe: Safe): string[] {
  return [
    safe(record['ts']),
    safe(record['verb']),
    safe(record['host'] ?? '-'),
    safe(record['operationId'] ?? '-'),
    safe(record['outcome']),
    safe(record['code'] ?? '-'),
    commitCell(record['repoCommit'], safe),
    paths(record, safe),
  ];
}

/** A line that is not a record: `line N` where the first column is, the raw line last. */
function malformedRow(record: AuditRecord, safe: Safe, width: number): string[] {
  const row = Array.from({ length: width }, () => '');
  row[0] = `line ${safe(record['line'])}`;
  row[width - 1] = `not a record: ${safe(record['raw'])}`;
  return row;
}

/**
 * The table's lines for `kind`'s records (`hosts`: a node's records through `--host`, each with
 * its host first). `paintOutcome` colours the outcome cell (a palette's `state`).
 */
export function renderAuditTable(
  kind: AuditLogKind,
  records: readonly AuditRecord[],
  safe: Safe,
  paintOutcome: (outcome: string) => string = (outcome) => outcome,
): string[] {
  const base = kind === 'operator' ? OPERATOR_HEADER : NODE_HEADER;
  const header = kind === 'hosts' ? ['HOST', ...base] : base;
  const rows = records.map((record) => {
    const host = kind === 'hosts' ? [safe(record['host'])] : [];
    if (record['malformed'] === true) return [...host, ...malformedRow(record, safe, base.length)];
    return [...host, ...(kind === 'operator' ? operatorRow(record, safe) : nodeRow(record, safe))];
  });
  const outcomeColumn = header.indexOf('OUTCOME');
  return renderTable(header, rows, (cell, column) =>
    column === outcomeColumn ? paintOutcome(cell) : cell,
  );
}
