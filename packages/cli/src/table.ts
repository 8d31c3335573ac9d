/**
 * Human tables (contract §7: human output is tables): a header row, columns padded to their
 * widest cell, two spaces apart, no trailing blanks. Cells are escaped by the caller; `paint`
 * (a palette's colour, applied after the widths are measured, so escape codes never misalign a
 * column) may colour a data cell by its column.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  paint?: (cell: string, column: number) => string,
): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const last = header.length - 1;
  const line = (row: readonly string[], painted: boolean) =>
    header
      .map((_, i) => {
        const cell = row[i] ?? '';
        const padding = i === last ? '' : ' '.repeat((widths[i] ?? 0) - cell.length);
        return `${painted && paint && cell !== '' ? paint(cell, i) : cell}${padding}`;
      })
      .join('  ')
      .trimEnd();
  return [line(header, false), ...rows.map((row) => line(row, true))];
}
