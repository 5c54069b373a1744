/** Plain-text rendering for people; `--json` is for scripts. */

const iso = (value: Date | string | null | undefined): string =>
  value === null || value === undefined ? '-' : new Date(value).toISOString();

export { iso };

/** Columns padded to their widest cell. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly unknown[]>): string {
  const cells = [header, ...rows.map((row) => row.map((cell) => cellText(cell)))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function cellText(cell: unknown): string {
  if (cell instanceof Date) return cell.toISOString();
  if (cell === null || cell === undefined) return '-';
  if (typeof cell === 'string') return cell;
  if (typeof cell === 'number' || typeof cell === 'boolean' || typeof cell === 'bigint') {
    return cell.toString();
  }
  return JSON.stringify(cell) ?? '-';
}
