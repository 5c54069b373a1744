/** `notification_channels.backoff_*`, validated. Delays are in milliseconds. */
export type RetryBackoff =
  | { readonly kind: 'Fixed'; readonly baseMs: number }
  | {
      readonly kind: 'Exponential';
      readonly baseMs: number;
      readonly maxMs: number;
      readonly multiplier: number;
    };

/**
 * Delay before the next attempt, given how many attempts have been made so far
 * (the count that includes the attempt that just failed, so ≥ 1).
 * Fixed = base; Exponential = min(max, base × multiplier^(attempts − 1)).
 */
export function backoffDelayMs(backoff: RetryBackoff, attempts: number): number {
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new RangeError(`attempts must be an integer ≥ 1, got ${attempts}`);
  }
  if (backoff.kind === 'Fixed') return backoff.baseMs;
  // A zero base stays zero; checked first because 0 × Infinity (an overflowed pow) is NaN.
  if (backoff.baseMs === 0) return 0;
  const raw = backoff.baseMs * Math.pow(backoff.multiplier, attempts - 1);
  // pow overflows to Infinity long before attempts stop being plausible; min() keeps it at the cap.
  return Math.min(backoff.maxMs, raw);
}
