import { DeliveryError } from './delivery.error';
import type { DeliveryErrorOptions } from './delivery-error-options';

/** Timeout, 5xx, a dropped connection: worth another attempt after backoff. */
export class RetriableDeliveryError extends DeliveryError {
  readonly retriable = true;

  constructor(code: string, message: string = code, options?: DeliveryErrorOptions) {
    super(code, message, options);
  }
}
