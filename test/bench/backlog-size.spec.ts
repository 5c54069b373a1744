import { BACKLOG_SAFETY, expectedRate, rowsNeeded } from './backlog-size';

const plan = { warmupMs: 1_000, windowMs: 3_000, maxWindowMs: 12_000, callsInFlight: 2_000 };

describe('backlog sized to the cell', () => {
  it('covers the warm-up, the window and the stop at the expected rate, with the margin', () => {
    // 10,000 rows/s over 1 s + 3 s, and two sets of calls in flight for the stop.
    expect(rowsNeeded({ ...plan, latencyMs: 0 }, 10_000)).toBe(
      Math.ceil(BACKLOG_SAFETY * (40_000 + 4_000)),
    );
  });

  it('covers a window that grows to six waves of the calls in flight, within its cap', () => {
    // 1 s latency at 1,000 rows/s: the window grows to 6 × 2,000 rows (12 s), then the stop.
    expect(rowsNeeded({ ...plan, latencyMs: 1_000 }, 1_000)).toBe(
      Math.ceil(BACKLOG_SAFETY * (2_000 + 12_000 + 4_000)),
    );
    // A fast stream's waves are short: its shortest window is the longer part.
    expect(rowsNeeded({ ...plan, latencyMs: 50 }, 8_000)).toBe(
      Math.ceil(BACKLOG_SAFETY * (8 * 1_050 + 24_000 + 4_000)),
    );
  });

  it('needs nothing for an unknown rate', () => {
    expect(rowsNeeded({ ...plan, latencyMs: 0 }, Number.NaN)).toBe(0);
  });

  it("expects a cell's own fastest run, else its 0 ms rate capped by calls in flight ÷ latency", () => {
    const none = { sameCell: [], atZeroMs: [], fastestSoFar: Number.NaN };
    expect(expectedRate(none, 0, 2_000)).toBeNaN();
    expect(expectedRate({ ...none, fastestSoFar: 12_000 }, 0, 2_000)).toBe(12_000);
    expect(expectedRate({ ...none, atZeroMs: [9_000, 8_500] }, 200, 2_000)).toBe(9_000);
    expect(expectedRate({ ...none, atZeroMs: [9_000] }, 1_000, 2_000)).toBe(2_000);
    expect(expectedRate({ ...none, atZeroMs: [9_000], sameCell: [9_500] }, 50, 2_000)).toBe(9_500);
    expect(expectedRate(none, 20, 10)).toBe(500);
  });
});
