import { NotificationsRetryError } from '../../errors/notifications-retry.error';

/**
 * What a provider adapter throws when a send did not go through. The subclass
 * tells the worker what to do with the row; `code` is a short, stable,
 * non-personal reason that operators see in `last_error_code`.
 */
export abstract class DeliveryError extends NotificationsRetryError {
  abstract readonly retriable: boolean;

  protected constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
