import { DeliveryError } from './delivery.error';

/** Invalid address or token, revoked template: another attempt cannot succeed. */
export class NonRetriableDeliveryError extends DeliveryError {
  readonly retriable = false;

  constructor(code: string, message: string = code, options?: ErrorOptions) {
    super(code, message, options);
  }
}
