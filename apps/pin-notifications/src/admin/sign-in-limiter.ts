import { SignInLimitedError } from './sign-in-limited.error';

export interface SignInLimit {
  /** Failures allowed per client address within the window; the next attempt is refused. */
  readonly maxFailures: number;
  readonly windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMIT: SignInLimit = { maxFailures: 5, windowMs: 15 * 60_000 };

/** Addresses tracked at most: a flood of spoofed addresses cannot grow the map without bound. */
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * Guessing ADMIN_TOKEN from one address is bounded: after `maxFailures` wrong
 * tokens inside the window, sign-in from that address is refused until the
 * oldest failure leaves the window. In memory, per process: a fleet behind a
 * balancer multiplies the budget by its size, which the token's length
 * (24+ characters) makes irrelevant.
 */
export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: SignInLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws SignInLimitedError when this client has used its failures. */
  check(client: string): void {
    const recent = this.recent(client);
    if (recent.length >= this.limit.maxFailures) {
      const retryAfterMs = recent[0] + this.limit.windowMs - this.now();
      throw new SignInLimitedError(Math.max(1, Math.ceil(retryAfterMs / 1000)));
    }
  }

  recordFailure(client: string): void {
    const recent = this.recent(client);
    recent.push(this.now());
    this.failures.delete(client);
    if (this.failures.size >= MAX_TRACKED_CLIENTS) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    this.failures.set(client, recent);
  }

  recordSuccess(client: string): void {
    this.failures.delete(client);
  }

  private recent(client: string): number[] {
    const since = this.now() - this.limit.windowMs;
    return (this.failures.get(client) ?? []).filter((at) => at > since);
  }
}
