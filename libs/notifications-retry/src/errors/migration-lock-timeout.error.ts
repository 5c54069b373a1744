import { NotificationsRetryError } from './notifications-retry.error';

/** Another replica held the migrations lock for longer than the lock timeout; nothing was migrated. */
export class MigrationLockTimeoutError extends NotificationsRetryError {
  readonly code = 'migration_lock_timeout';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
