import type { BenchSystem } from './bench-system';
import { expectedRate } from './backlog-size';

/** What the history needs of a cell's run. */
export interface RunRates {
  /** The slope over the window. */
  readonly rowsPerSec: number;
  /** Calls ÷ time to the last return: all a run that emptied its backlog early tells. */
  readonly paceRowsPerSec: number;
}

/** The write limits: before any system's own 0 ms cell, the fastest writing seen is theirs. */
const WRITE_LIMITS: ReadonlyArray<BenchSystem['name']> = ['write-limit', 'set-write-limit'];

/** The rates each (system, latency) showed so far, dry runs included: what backlogs are sized by. */
export class RateHistory {
  private readonly rates = new Map<string, number[]>();

  record(system: BenchSystem, latencyMs: number, run: RunRates): void {
    const key = `${system.name}|${latencyMs}`;
    const rates = this.rates.get(key) ?? [];
    rates.push(run.rowsPerSec, run.paceRowsPerSec);
    this.rates.set(key, rates);
  }

  expected(system: BenchSystem, latencyMs: number): number {
    const written = WRITE_LIMITS.flatMap((name) => this.rates.get(`${name}|0`) ?? []).filter(
      Number.isFinite,
    );
    return expectedRate(
      {
        sameCell: this.rates.get(`${system.name}|${latencyMs}`) ?? [],
        atZeroMs: this.rates.get(`${system.name}|0`) ?? [],
        // Math.max of none is -Infinity, and of any NaN is NaN: only finite rates go in.
        fastestSoFar: written.length > 0 ? Math.max(...written) : Number.NaN,
      },
      latencyMs,
      system.callsInFlight,
    );
  }
}
