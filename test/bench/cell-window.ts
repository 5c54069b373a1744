/** Waves of calls (most calls seen in flight ÷ rows/s) a measured window spans at least, up to `--max-window`. */
export const MIN_WAVES = 6;

/** Warm-up and measured window of a throughput cell, ms. */
export interface CellWindow {
  readonly warmupMs: number;
  readonly windowMs: number;
}

/**
 * A cell runs for its warm-up (pools filling, first fetches, the first waves of
 * calls) and then its window, which alone is measured. Both scale with the
 * provider latency, so a 1 s cell sees at least six waves of calls in its
 * window (the harness lengthens it for systems whose waves are longer).
 */
export function cellWindow(
  latencyMs: number,
  warmupSeconds: number,
  windowSeconds: number,
): CellWindow {
  return {
    warmupMs: Math.max(warmupSeconds * 1000, 2 * latencyMs),
    windowMs: Math.max(windowSeconds * 1000, 6 * latencyMs),
  };
}

/**
 * Rows per second over [fromMs, toMs): the least-squares slope of the running
 * count of returned calls against their return times. A fixed window would
 * count one wave more or less depending on where it cuts (at 1 s latency and
 * 19 calls in flight, calls return in waves of 19 once a second); the slope
 * through the returns is exact for waves and unbiased for a steady stream.
 * NaN with fewer than two returns, or when they all share one instant.
 */
export function rateInWindow(returnedAt: readonly number[], fromMs: number, toMs: number): number {
  const times = returnedAt.filter((t) => t >= fromMs && t < toMs).sort((a, b) => a - b);
  const n = times.length;
  if (n < 2) return Number.NaN;
  const meanT = times.reduce((sum, t) => sum + t, 0) / n;
  const meanI = (n - 1) / 2;
  let covariance = 0;
  let variance = 0;
  for (let i = 0; i < n; i++) {
    const dt = times[i] - meanT;
    covariance += dt * (i - meanI);
    variance += dt * dt;
  }
  return variance > 0 ? (covariance / variance) * 1000 : Number.NaN;
}

/**
 * Returns in [fromMs, toMs) per second of the window: off by up to one wave,
 * but never fooled by waves (the slope is, when a window holds one or two wide
 * waves); good enough to tell how long a wave lasts.
 */
export function countRate(returnedAt: readonly number[], fromMs: number, toMs: number): number {
  const count = returnedAt.filter((t) => t >= fromMs && t < toMs).length;
  return toMs > fromMs ? (count * 1000) / (toMs - fromMs) : Number.NaN;
}
