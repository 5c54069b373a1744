import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';

/** A page's `limit`: the default when absent, else an integer from 1 to `max`. */
export function validatePageLimit(
  limit: number | undefined,
  defaults: { readonly default: number; readonly max: number },
  option = 'limit',
): number {
  if (limit === undefined) return defaults.default;
  if (
    typeof limit !== 'number' ||
    !Number.isSafeInteger(limit) ||
    limit < 1 ||
    limit > defaults.max
  ) {
    throw new InvalidOperationInputError(
      option,
      `must be an integer from 1 to ${defaults.max}; got ${JSON.stringify(limit)}`,
    );
  }
  return limit;
}
