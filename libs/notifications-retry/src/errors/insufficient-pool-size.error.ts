import { NotificationsRetryError } from './notifications-retry.error';

/**
 * Every in-flight row holds a connection for its whole transaction, and the lease
 * and the claim need one more, so a pool no larger than the concurrency would
 * deadlock the cycle against itself.
 */
export class InsufficientPoolSizeError extends NotificationsRetryError {
  readonly code = 'insufficient_pool_size';

  constructor(
    readonly poolSize: number,
    readonly concurrency: number,
  ) {
    super(
      `NotificationsRetryModule option "concurrency" (${concurrency}) needs a database pool of at least ${concurrency + 1} connections; the DataSource pool has ${poolSize}. Raise "extra.max" of the TypeORM connection or lower "concurrency".`,
    );
  }
}
