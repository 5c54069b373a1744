import { NotificationsRetryError } from './notifications-retry.error';

/**
 * Provider calls hold no connection, but a claim and an outcome write must be
 * able to run at once, or every write would wait behind the next claim.
 */
export class InsufficientPoolSizeError extends NotificationsRetryError {
  readonly code = 'insufficient_pool_size';

  constructor(
    readonly poolSize: number,
    readonly required: number,
  ) {
    super(
      `NotificationsRetryModule needs a database pool of at least ${required} connections (a claim and an outcome write at once); the DataSource pool has ${poolSize}. Raise "extra.max" of the TypeORM connection.`,
    );
  }
}
