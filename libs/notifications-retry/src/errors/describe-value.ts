/**
 * A bad value as an operator should read it in an error message: NaN and
 * Infinity as themselves (JSON would print them as null), strings quoted,
 * classes and functions by name (JSON would drop them, or print nothing).
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'number')
    return Number.isNaN(value) || !Number.isFinite(value) ? String(value) : JSON.stringify(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return describeFunction(value);
  if (value === undefined) return 'undefined';
  try {
    return (
      JSON.stringify(value, (_key, inner: unknown) =>
        typeof inner === 'function' ? describeFunction(inner) : inner,
      ) ?? typeof value
    );
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function describeFunction(fn: { readonly name: string }): string {
  const isClass = /^class\b/.test(Function.prototype.toString.call(fn));
  return `[${isClass ? 'class' : 'function'} ${fn.name || '(anonymous)'}]`;
}
