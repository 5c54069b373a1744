/**
 * A bad value as an operator should read it in an error message: NaN and
 * Infinity as themselves (JSON would print them as null), strings quoted.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'number')
    return Number.isNaN(value) || !Number.isFinite(value) ? String(value) : JSON.stringify(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return Object.prototype.toString.call(value);
  }
}
