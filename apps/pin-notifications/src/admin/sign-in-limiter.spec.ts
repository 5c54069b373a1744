import { SignInLimiter } from './sign-in-limiter';
import { SignInLimitedError } from './sign-in-limited.error';

describe('SignInLimiter', () => {
  let now = 0;
  const limiter = (): SignInLimiter =>
    new SignInLimiter({ maxFailures: 3, windowMs: 60_000 }, () => now);

  beforeEach(() => {
    now = 1_000_000;
  });

  it('refuses the attempt after maxFailures failures, with the seconds until the oldest leaves the window', () => {
    const l = limiter();
    for (let i = 0; i < 3; i++) {
      l.check('10.0.0.1');
      l.recordFailure('10.0.0.1');
      now += 10_000;
    }
    expect(() => l.check('10.0.0.1')).toThrow(SignInLimitedError);
    try {
      l.check('10.0.0.1');
    } catch (error) {
      // First failure at 1_000_000, now 1_030_000: 30 s left of the 60 s window.
      expect((error as SignInLimitedError).retryAfterSeconds).toBe(30);
    }
    // Another address is not affected.
    expect(() => l.check('10.0.0.2')).not.toThrow();
    // Once the first failure leaves the window, one more attempt is allowed.
    now += 30_001;
    expect(() => l.check('10.0.0.1')).not.toThrow();
  });

  it('forgets the failures of an address that signs in', () => {
    const l = limiter();
    l.recordFailure('a');
    l.recordFailure('a');
    l.recordSuccess('a');
    l.recordFailure('a');
    l.recordFailure('a');
    expect(() => l.check('a')).not.toThrow();
    l.recordFailure('a');
    expect(() => l.check('a')).toThrow(SignInLimitedError);
  });
});
