import type { BenchSystem } from './bench-system';
import { RateHistory } from './rate-history';

const system = (name: BenchSystem['name'], callsInFlight: number): BenchSystem =>
  ({ name, callsInFlight }) as BenchSystem;

describe('rate history', () => {
  const ours = system('ours', 2_000);
  const setLimit = system('set-write-limit', 2_000);

  it('knows nothing before the first cell', () => {
    expect(new RateHistory().expected(ours, 0)).toBeNaN();
  });

  it("stands in the fastest write limit's rate for a system's unmeasured 0 ms, a dry run's pace included", () => {
    const history = new RateHistory();
    // Emptied its backlog inside the warm-up: no slope, only the pace.
    history.record(setLimit, 0, { rowsPerSec: Number.NaN, paceRowsPerSec: 15_000 });
    history.record(system('write-limit', 20), 0, { rowsPerSec: 3_000, paceRowsPerSec: 2_900 });
    expect(history.expected(ours, 0)).toBe(15_000);
    // At 1 s, no more than calls in flight ÷ latency.
    expect(history.expected(ours, 1_000)).toBe(2_000);
  });

  it("prefers the system's own runs once it has them", () => {
    const history = new RateHistory();
    history.record(setLimit, 0, { rowsPerSec: 26_000, paceRowsPerSec: 25_000 });
    history.record(ours, 0, { rowsPerSec: 9_000, paceRowsPerSec: 8_000 });
    expect(history.expected(ours, 0)).toBe(9_000);
    expect(history.expected(ours, 200)).toBe(9_000);
  });
});
