import { cellWindow, countRate, rateInWindow } from './cell-window';

/** `count` returns at each of `waves` instants, `periodMs` apart from `firstMs`. */
function waves(firstMs: number, periodMs: number, waveCount: number, count: number): number[] {
  return Array.from({ length: waveCount }, (_, w) =>
    Array.from({ length: count }, () => firstMs + w * periodMs),
  ).flat();
}

describe('cell window and rate', () => {
  it('scales warm-up and window with the latency, above the shortest ones asked for', () => {
    expect(cellWindow(0, 1, 3)).toEqual({ warmupMs: 1000, windowMs: 3000 });
    expect(cellWindow(1000, 1, 3)).toEqual({ warmupMs: 2000, windowMs: 6000 });
  });

  it('measures waves exactly wherever the window cuts them, where a count is off by a wave', () => {
    // 19 calls returning together once a second: 19 rows/s; windows of 6.5 periods.
    const returns = waves(2_300, 1_000, 12, 19);
    for (const from of [2_000, 2_250, 2_700, 3_050]) {
      expect(rateInWindow(returns, from, from + 6_500)).toBeCloseTo(19, 6);
    }
    expect(countRate(returns, 2_000, 8_500)).toBeCloseTo((7 * 19) / 6.5, 6);
    expect(countRate(returns, 2_700, 9_200)).toBeCloseTo((6 * 19) / 6.5, 6);
  });

  it('measures a steady stream at its rate', () => {
    const returns = Array.from({ length: 5_000 }, (_, i) => i * 0.5); // 2,000 rows/s
    expect(rateInWindow(returns, 100, 2_100)).toBeCloseTo(2_000, 6);
    expect(countRate(returns, 100, 2_100)).toBeCloseTo(2_000, 6);
  });

  it('has no rate for fewer than two returns, or all at one instant', () => {
    expect(rateInWindow([], 0, 1_000)).toBeNaN();
    expect(rateInWindow([500], 0, 1_000)).toBeNaN();
    expect(rateInWindow([500, 500, 500], 0, 1_000)).toBeNaN();
  });
});
