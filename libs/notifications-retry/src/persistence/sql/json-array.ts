/**
 * A JSON array of values that are JSON texts already (or null): their texts
 * joined, nothing parsed or escaped. The caller vouches that each text is one
 * JSON value, as JSON.stringify makes it; PostgreSQL's `::jsonb` checks the
 * whole when the statement runs.
 */
export function jsonArray(texts: readonly (string | null)[]): string {
  let array = '[';
  for (let i = 0; i < texts.length; i++) {
    if (i > 0) array += ',';
    array += texts[i] ?? 'null';
  }
  return `${array}]`;
}
