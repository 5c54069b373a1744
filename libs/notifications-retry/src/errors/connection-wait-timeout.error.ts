import { NotificationsRetryError } from './notifications-retry.error';

/**
 * No pooled connection came before the lease could run out: a statement sent
 * after that would be fenced anyway, so the cycle stops waiting (DESIGN §3,
 * "a starving pool cannot outlive the lease").
 */
export class ConnectionWaitTimeoutError extends NotificationsRetryError {
  readonly code = 'connection_wait_timeout';

  constructor(readonly waitedMs: number) {
    super(
      `no database connection within ${Math.round(waitedMs)} ms, the time the cycle's lease had left`,
    );
  }
}
