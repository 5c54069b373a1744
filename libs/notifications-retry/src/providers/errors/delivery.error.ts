import { NotificationsRetryError } from '../../errors/notifications-retry.error';
import type { DeliveryErrorOptions } from './delivery-error-options';

/**
 * What a provider adapter throws when a send did not go through. The subclass
 * tells the worker what to do with the row; `code` is a short, stable,
 * non-personal reason that operators see in `last_error_code`.
 */
export abstract class DeliveryError extends NotificationsRetryError {
  abstract readonly retriable: boolean;
  /** The provider's HTTP status, when it answered with one; stored as `HTTP 503: <text>`. */
  readonly httpStatus: number | undefined;

  protected constructor(
    readonly code: string,
    message: string,
    options?: DeliveryErrorOptions,
  ) {
    super(message, options);
    this.httpStatus = options?.httpStatus;
  }
}
