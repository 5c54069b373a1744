/**
 * A timestamptz as the text a keyset cursor keeps: UTC with microseconds,
 * which `::timestamptz` reads back exactly (see `keyset-cursor.ts`).
 */
export function keysetTimeSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * The rows after a cursor's position in `(at, id)` order, ascending or
 * descending; every row when the position's values are null (the first page).
 */
export function afterPositionSql(
  at: { readonly column: string; readonly value: string },
  id: { readonly column: string; readonly value: string },
  order: 'asc' | 'desc',
): string {
  const comparison = order === 'asc' ? '>' : '<';
  return `(${at.value}::timestamptz IS NULL OR (${at.column}, ${id.column}) ${comparison} (${at.value}::timestamptz, ${id.value}::uuid))`;
}
