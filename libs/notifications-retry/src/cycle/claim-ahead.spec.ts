import { ClaimAhead } from './claim-ahead';

describe('ClaimAhead', () => {
  it('claims nothing ahead before a rate sample is complete', () => {
    const ahead = new ClaimAhead(100, 50);
    for (let at = 0; at < 99; at++) ahead.callEnded(at);
    expect(ahead.rows(99)).toBe(0);
  });

  it('claims what calls end within the horizon at the sampled pace', () => {
    const ahead = new ClaimAhead(1_000, 50);
    // Two calls per ms over one 100 ms sample: 100 rows in 50 ms.
    for (let at = 0; at <= 100; at += 0.5) ahead.callEnded(at);
    expect(ahead.rows(100)).toBe(100);
  });

  it('never claims more than its cap ahead', () => {
    const ahead = new ClaimAhead(30, 50);
    for (let at = 0; at <= 100; at += 0.5) ahead.callEnded(at);
    expect(ahead.rows(100)).toBe(30);
  });

  it('follows a slower pace within a few samples', () => {
    const ahead = new ClaimAhead(1_000, 100);
    for (let at = 0; at <= 100; at += 0.5) ahead.callEnded(at);
    const fast = ahead.rows(100);
    // Then one call per 10 ms for three samples.
    for (let at = 110; at <= 400; at += 10) ahead.callEnded(at);
    const slow = ahead.rows(400);
    expect(fast).toBe(200);
    expect(slow).toBeLessThan(40);
    expect(slow).toBeGreaterThanOrEqual(10);
  });

  it('claims nothing ahead once calls have stopped ending for a while', () => {
    const ahead = new ClaimAhead(1_000, 50);
    for (let at = 0; at <= 100; at += 0.5) ahead.callEnded(at);
    expect(ahead.rows(1_000)).toBe(100);
    expect(ahead.rows(1_101)).toBe(0);
  });
});
