/** Jitter spreads a delay by up to ±20 %, so rows that failed together do not retry together. */
export const BACKOFF_JITTER_RATIO = 0.2;

/** `notification_channels.backoff_*`, validated. Delays are in milliseconds. */
export type RetryBackoff =
  | {
      readonly kind: 'Fixed';
      readonly baseMs: number;
      /** Caps the delay after jitter; null or absent = no cap. */
      readonly maxMs?: number | null;
      /** ±20 % jitter; absent = on, as for a `notification_channels` row. */
      readonly jitter?: boolean;
    }
  | {
      readonly kind: 'Exponential';
      readonly baseMs: number;
      /** Caps the delay after jitter. */
      readonly maxMs: number;
      readonly multiplier: number;
      /** ±20 % jitter; absent = on, as for a `notification_channels` row. */
      readonly jitter?: boolean;
    };

/**
 * Delay before the next attempt, given how many attempts have been made so far
 * (the count that includes the attempt that just failed, so ≥ 1).
 * Fixed = base; Exponential = base × multiplier^(attempts − 1); then, when the
 * channel wants jitter (unless `jitter: false`), × (1 ± 20 %) by `jitterSample`; then capped at max.
 *
 * `jitterSample` is a uniform sample from [0, 1] (the worker's RandomSource);
 * 0.5 is the undisturbed delay. Pure: the same inputs give the same delay.
 */
export function backoffDelayMs(
  backoff: RetryBackoff,
  attempts: number,
  jitterSample = 0.5,
): number {
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new RangeError(`attempts must be an integer ≥ 1, got ${attempts}`);
  }
  if (!(jitterSample >= 0 && jitterSample <= 1)) {
    throw new RangeError(`jitterSample must be within [0, 1], got ${jitterSample}`);
  }
  let delay: number;
  if (backoff.kind === 'Fixed' || backoff.baseMs === 0) {
    // A zero base stays zero; checked first because 0 × Infinity (an overflowed pow) is NaN.
    delay = backoff.baseMs;
  } else {
    // pow overflows to Infinity long before attempts stop being plausible; the cap below keeps it finite.
    delay = backoff.baseMs * Math.pow(backoff.multiplier, attempts - 1);
  }
  if (backoff.jitter !== false) delay *= 1 + BACKOFF_JITTER_RATIO * (2 * jitterSample - 1);
  const cap = backoff.maxMs ?? Number.POSITIVE_INFINITY;
  return Math.min(cap, delay);
}
