import type { ResolvedNotificationsRetryOptions } from './notifications-retry-options';

/** Room after the slowest possible call for its outcome write inside the lease. */
export const LEASE_SAFETY_MARGIN_MS = 5_000;

/** The longest channel timeout a cycle can take: a call started at the deadline, with its margin, ends inside the lease. */
export function leaseAllowanceMs(options: ResolvedNotificationsRetryOptions): number {
  return (
    options.lockTtlMs - options.maxCycleDurationMs - options.settleMarginMs - LEASE_SAFETY_MARGIN_MS
  );
}
