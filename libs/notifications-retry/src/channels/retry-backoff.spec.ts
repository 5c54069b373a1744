import { backoffDelayMs, type RetryBackoff } from './retry-backoff';

describe('backoffDelayMs', () => {
  describe('Fixed', () => {
    const fixed: RetryBackoff = { kind: 'Fixed', baseMs: 30_000 };

    it.each([1, 2, 3, 10, 1_000, 1_000_000])(
      'is always the base delay (attempts %p)',
      (attempts) => {
        expect(backoffDelayMs(fixed, attempts)).toBe(30_000);
      },
    );

    it('can be zero (retry at the next cycle)', () => {
      expect(backoffDelayMs({ kind: 'Fixed', baseMs: 0 }, 4)).toBe(0);
    });
  });

  describe('Exponential', () => {
    const exponential: RetryBackoff = {
      kind: 'Exponential',
      baseMs: 1_000,
      maxMs: 3_600_000,
      multiplier: 2,
    };

    it('starts at the base delay after the first attempt', () => {
      expect(backoffDelayMs(exponential, 1)).toBe(1_000);
    });

    it.each([
      // attempts, base × 2^(attempts − 1)
      [2, 2_000],
      [3, 4_000],
      [4, 8_000],
      [5, 16_000],
      [11, 1_024_000],
    ])('grows as base × multiplier^(attempts − 1) (attempts %p → %p ms)', (attempts, expected) => {
      expect(backoffDelayMs(exponential, attempts)).toBe(expected);
    });

    it('grows by exactly the multiplier from one attempt to the next while below the cap', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 500,
        maxMs: 10_000_000,
        multiplier: 3,
      };
      for (let attempts = 1; attempts < 8; attempts++) {
        expect(backoffDelayMs(backoff, attempts + 1)).toBe(backoffDelayMs(backoff, attempts) * 3);
      }
    });

    it('supports a fractional multiplier', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 1_000,
        maxMs: 100_000,
        multiplier: 1.5,
      };
      expect(backoffDelayMs(backoff, 3)).toBeCloseTo(1_000 * 1.5 * 1.5, 6);
    });

    it('stays at the base delay with multiplier 1', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 7_000,
        maxMs: 60_000,
        multiplier: 1,
      };
      expect(backoffDelayMs(backoff, 1)).toBe(7_000);
      expect(backoffDelayMs(backoff, 50)).toBe(7_000);
      expect(backoffDelayMs(backoff, 100_000)).toBe(7_000);
    });

    it('is capped at maxMs', () => {
      // 1000 × 2^12 = 4 096 000 > 3 600 000
      expect(backoffDelayMs(exponential, 13)).toBe(3_600_000);
      // 1000 × 2^11 = 2 048 000 is still below the cap
      expect(backoffDelayMs(exponential, 12)).toBe(2_048_000);
    });

    it('hits the cap exactly when base × multiplier^(n−1) equals max', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 1_000,
        maxMs: 8_000,
        multiplier: 2,
      };
      expect(backoffDelayMs(backoff, 4)).toBe(8_000);
      expect(backoffDelayMs(backoff, 5)).toBe(8_000);
    });

    it('is the cap when max equals base', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 5_000,
        maxMs: 5_000,
        multiplier: 10,
      };
      expect(backoffDelayMs(backoff, 1)).toBe(5_000);
      expect(backoffDelayMs(backoff, 6)).toBe(5_000);
    });

    it.each([1_025, 5_000, 1_000_000, Number.MAX_SAFE_INTEGER])(
      'returns the finite cap for huge attempts (%p), where multiplier^(attempts−1) overflows',
      (attempts) => {
        expect(Math.pow(2, attempts - 1)).toBe(Infinity); // the overflow this test is about
        const delay = backoffDelayMs(exponential, attempts);
        expect(Number.isFinite(delay)).toBe(true);
        expect(delay).toBe(3_600_000);
      },
    );

    it('never decreases as attempts grow', () => {
      let previous = 0;
      for (let attempts = 1; attempts <= 2_000; attempts++) {
        const delay = backoffDelayMs(exponential, attempts);
        expect(delay).toBeGreaterThanOrEqual(previous);
        previous = delay;
      }
    });

    // backoff_base_ms = 0 is valid; once pow() overflows, 0 × Infinity would be NaN and
    // next_attempt_at an Invalid Date.
    it('returns 0, not NaN, for a zero base when multiplier^(attempts−1) overflows', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 0,
        maxMs: 60_000,
        multiplier: 2,
      };
      expect(backoffDelayMs(backoff, 2_000)).toBe(0);
    });

    it('returns 0 for a zero base while pow() stays finite', () => {
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 0,
        maxMs: 60_000,
        multiplier: 2,
      };
      expect(backoffDelayMs(backoff, 10)).toBe(0);
    });
  });

  describe('attempts validation', () => {
    const backoffs: RetryBackoff[] = [
      { kind: 'Fixed', baseMs: 1_000 },
      { kind: 'Exponential', baseMs: 1_000, maxMs: 60_000, multiplier: 2 },
    ];

    it.each([0, -1, -100, 0.5, 1.5, 2.0001, NaN, Infinity, -Infinity])(
      'rejects attempts = %p with a RangeError naming the value',
      (attempts) => {
        for (const backoff of backoffs) {
          expect(() => backoffDelayMs(backoff, attempts)).toThrow(RangeError);
          expect(() => backoffDelayMs(backoff, attempts)).toThrow(String(attempts));
        }
      },
    );

    it('accepts attempts = 1', () => {
      for (const backoff of backoffs) {
        expect(backoffDelayMs(backoff, 1)).toBe(1_000);
      }
    });
  });

  describe('jitter', () => {
    it('spreads the delay by up to ±20 % when the backoff does not say (absent means on)', () => {
      const backoff: RetryBackoff = { kind: 'Fixed', baseMs: 1_000 };
      expect(backoffDelayMs(backoff, 1, 0)).toBe(800);
      expect(backoffDelayMs(backoff, 1, 1)).toBe(1_200);
    });

    it('takes the ends of [0, 1] as samples, and refuses any value outside it', () => {
      const backoff: RetryBackoff = { kind: 'Fixed', baseMs: 1_000 };
      expect(backoffDelayMs(backoff, 1, 0)).toBe(800);
      expect(backoffDelayMs(backoff, 1, 1)).toBe(1_200);
      for (const sample of [-0.01, 1.01, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(() => backoffDelayMs(backoff, 1, sample)).toThrow(
          new RangeError(`jitterSample must be within [0, 1], got ${sample}`),
        );
      }
    });

    it('leaves the delay alone when jitter is off', () => {
      const backoff: RetryBackoff = { kind: 'Fixed', baseMs: 1_000, jitter: false };
      expect(backoffDelayMs(backoff, 1, 0)).toBe(1_000);
    });

    // The cap applies after jitter: a capped delay never exceeds maxMs, and jitter below the cap
    // is not taken from an already capped value.
    it('caps after jitter: an Exponential delay jittered above maxMs is maxMs, never more', () => {
      // 1000 × 2^(3−1) = 4000; × 1.2 = 4800 → 3000 (jittering the cap would give 3600)
      const backoff: RetryBackoff = {
        kind: 'Exponential',
        baseMs: 1_000,
        maxMs: 3_000,
        multiplier: 2,
      };
      expect(backoffDelayMs(backoff, 3, 1)).toBe(3_000);
      // 4000 × 0.8 = 3200 → 3000 (capping first, then jittering, would give 2400)
      expect(backoffDelayMs(backoff, 3, 0)).toBe(3_000);
      // below the cap, jitter still spreads the delay: 2000 × 1.2 = 2400
      expect(backoffDelayMs(backoff, 2, 1)).toBe(2_400);
    });

    it('caps after jitter: a Fixed delay with maxMs is at most maxMs at the top of the jitter', () => {
      const backoff: RetryBackoff = { kind: 'Fixed', baseMs: 1_000, maxMs: 1_000 };
      expect(backoffDelayMs(backoff, 1, 1)).toBe(1_000);
      expect(backoffDelayMs(backoff, 1, 0)).toBe(800);
    });
  });
});
