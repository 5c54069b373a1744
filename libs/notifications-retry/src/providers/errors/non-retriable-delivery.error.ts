import { DeliveryError } from './delivery.error';
import type { DeliveryErrorOptions } from './delivery-error-options';

/** Invalid address or token, revoked template: another attempt cannot succeed. */
export class NonRetriableDeliveryError extends DeliveryError {
  readonly retriable = false;

  constructor(code: string, message: string = code, options?: DeliveryErrorOptions) {
    super(code, message, options);
  }
}
