import { performance } from 'node:perf_hooks';
import type { RandomSource } from '../clock/random-source';
import { isPassingDatabaseError } from '../persistence/database-error-kind';
import { passingErrorDelayMs } from '../persistence/retry-passing-errors';

/**
 * How long claims that fail for a passing reason (a migration's lock behind a
 * DBA's lock_timeout, a killed backend) are tried again before the cycle gives
 * up: past it the database is down rather than busy, and the next tick asks.
 */
const CLAIM_RETRY_WINDOW_MS = 10_000;

/**
 * One cycle's claims failing in a row. A claim that failed for a passing
 * reason changed nothing (one atomic statement): the cycle claims again after
 * a backoff, for a while; rows in flight go on meanwhile. Any other failure,
 * or one that outlasts the window, is thrown: it ends the cycle.
 */
export class ClaimRetry {
  private failures = 0;
  private since: number | null = null;
  /** `performance.now()` before which no claim is sent. */
  private at = 0;

  constructor(private readonly random: RandomSource) {}

  /** Whether a claim may go out now. */
  get ready(): boolean {
    return performance.now() >= this.at;
  }

  get readyAt(): number {
    return this.at;
  }

  /** Throws `error` unless the claim is to be tried again; else how long until then. */
  failed(error: unknown): number {
    const now = performance.now();
    this.since ??= now;
    if (!isPassingDatabaseError(error) || now - this.since > CLAIM_RETRY_WINDOW_MS) throw error;
    this.failures++;
    const delayMs = passingErrorDelayMs(this.failures, this.random.next());
    this.at = now + delayMs;
    return delayMs;
  }

  succeeded(): void {
    this.failures = 0;
    this.since = null;
  }
}
