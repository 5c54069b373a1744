import { MIN_WAVES } from './cell-window';

/**
 * How much more than the expected use a backlog holds: the rate of the cell's
 * own earlier runs, or of another latency, is only an estimate, and a run on a
 * quieter machine goes faster.
 */
export const BACKLOG_SAFETY = 1.5;

export interface CellPlan {
  readonly latencyMs: number;
  readonly warmupMs: number;
  /** The window before it grows. */
  readonly windowMs: number;
  /** How far it may grow (`--max-window`). */
  readonly maxWindowMs: number;
  readonly callsInFlight: number;
}

/**
 * Due rows a cell uses up at `rowsPerSec`, times the safety margin: the
 * warm-up, the window (at a latency, it grows to MIN_WAVES waves of the calls
 * in flight, so at most that many rows beyond its shortest length, within its
 * cap), and the stop: a latency's worth of calls finishing, and two full sets
 * of calls in flight (the ones running and what a queue fetched ahead).
 * 0 for an unknown rate.
 */
export function rowsNeeded(plan: CellPlan, rowsPerSec: number): number {
  if (!(rowsPerSec > 0) || !Number.isFinite(rowsPerSec)) return 0;
  const perMs = rowsPerSec / 1000;
  const windowRows =
    plan.latencyMs > 0
      ? Math.max(
          perMs * plan.windowMs,
          Math.min(perMs * plan.maxWindowMs, MIN_WAVES * plan.callsInFlight),
        )
      : perMs * plan.windowMs;
  const rows = perMs * (plan.warmupMs + plan.latencyMs) + windowRows + 2 * plan.callsInFlight;
  return Math.ceil(BACKLOG_SAFETY * rows);
}

export interface RateEvidence {
  /** Rates of the same (system, latency) cell seen so far, those of runs that ran dry included. */
  readonly sameCell: readonly number[];
  /** The same system's rates at 0 ms: it goes no faster with a provider that takes time. */
  readonly atZeroMs: readonly number[];
  /** The fastest any system has written so far (the write limits): a stand-in for an unmeasured 0 ms. */
  readonly fastestSoFar: number;
}

/**
 * The rate to size a cell's backlog for: the fastest of its own earlier runs,
 * or else what its 0 ms rate (or the fastest rate seen) allows, at a latency
 * no more than calls in flight ÷ latency. NaN when nothing is known yet (the
 * cell then starts from the backlog as it is, and grows it if it runs dry).
 */
export function expectedRate(
  evidence: RateEvidence,
  latencyMs: number,
  callsInFlight: number,
): number {
  const fastest = (values: readonly number[]): number => {
    const finite = values.filter((v) => Number.isFinite(v) && v > 0);
    return finite.length > 0 ? Math.max(...finite) : Number.NaN;
  };
  const own = fastest(evidence.sameCell);
  let base = fastest(evidence.atZeroMs);
  if (!Number.isFinite(base)) base = fastest([evidence.fastestSoFar]);
  const prior =
    latencyMs > 0
      ? Math.min((callsInFlight * 1000) / latencyMs, Number.isFinite(base) ? base : Infinity)
      : base;
  return fastest([own, prior]);
}
