/**
 * Human tables (contract §7: human output is tables): a header row, columns padded to their
 * widest cell, two spaces apart, no trailing blanks. Cells are escaped by the caller.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all.map((row) =>
    header
      .map((_, i) => (row[i] ?? '').padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}
