import { MissingLeaseFenceError } from '../../errors/missing-lease-fence.error';
import type { LeaseFence } from '../../vocabulary/lease-fence';
import type { StatementParameters } from './sql-statement';

/** The names a lock's fence parameters take inside a compiled statement: `fence1`…`fenceN`. */
export type FenceValue = `fence${number}`;

/**
 * The fence's SQL for a statement being compiled, its `$k` renumbered into the
 * statement's. Every statement that claims or settles is compiled at start
 * through here: a lock without a fence stops start-up with a named error.
 */
export function embedFence<Name extends string>(
  parameters: StatementParameters<Name | FenceValue>,
  fence: LeaseFence,
): string {
  const given: unknown = fence;
  if (
    typeof given !== 'object' ||
    given === null ||
    typeof (given as { sql?: unknown }).sql !== 'string' ||
    typeof (given as { params?: unknown }).params !== 'function'
  ) {
    throw new MissingLeaseFenceError(given);
  }
  const highest = Math.max(0, ...[...fence.sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  const names = Array.from({ length: highest }, (_, i): FenceValue => `fence${i + 1}`);
  return parameters.adopt(fence.sql, names);
}

/** A lease's fence values under the names `embedFence` gave them. */
export function fenceValues(params: readonly unknown[]): Record<FenceValue, unknown> {
  const values: Record<FenceValue, unknown> = {};
  params.forEach((value, i) => {
    values[`fence${i + 1}`] = value;
  });
  return values;
}
