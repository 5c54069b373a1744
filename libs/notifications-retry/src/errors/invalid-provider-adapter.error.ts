import { NotificationsRetryError } from './notifications-retry.error';

/** A class decorated with `@NotificationProvider()` that the worker cannot call. */
export class InvalidProviderAdapterError extends NotificationsRetryError {
  readonly code = 'invalid_provider_adapter';

  constructor(
    readonly adapter: string,
    reason: string,
  ) {
    super(`Provider adapter ${adapter} ${reason}`);
  }
}
