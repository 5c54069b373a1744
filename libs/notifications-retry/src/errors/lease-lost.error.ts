import { NotificationsRetryError } from './notifications-retry.error';

/** The cycle's lease expired or was taken over: its calls in flight are cut. */
export class LeaseLostError extends NotificationsRetryError {
  readonly code = 'lease_lost';

  constructor(
    readonly lockKey: string,
    readonly fencingToken: number,
  ) {
    super(`Lease "${lockKey}" (fencing token ${fencingToken}) is no longer held by this cycle`);
  }
}
