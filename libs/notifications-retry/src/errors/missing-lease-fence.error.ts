import { describeValue } from './describe-value';
import { NotificationsRetryError } from './notifications-retry.error';

/**
 * Thrown at start when the DistributedLock in use has no fence (a lock written
 * before `fence` existed, or in JavaScript): every claim and outcome write
 * embeds it, so the cycle cannot run without one. Says what to implement,
 * where a bare TypeError would only say that `sql` could not be read.
 */
export class MissingLeaseFenceError extends NotificationsRetryError {
  readonly code = 'missing_lease_fence';

  constructor(readonly fence: unknown) {
    super(
      `The DistributedLock in use (extensions.distributedLock) has no fence: got ${describeValue(fence)}. ` +
        'Implement `readonly fence: LeaseFence` on it: { sql, params(lease) }, where sql is a SELECT that ' +
        "returns one row, with the lease's expiry by the lock's clock as expires_at, while the lease is " +
        "still the caller's (taking a row lock that makes a takeover wait for the statement), with " +
        'placeholders $1…$n, and params(lease) returns their values. Every claim and outcome write ' +
        'embeds it, so an owner that lost the lease can never claim or write (see LeaseFence; the ' +
        "default PostgresDistributedLock's fence is an example).",
    );
  }
}
