import { DeliveryError } from './delivery.error';

/** Timeout, 5xx, a dropped connection: worth another attempt after backoff. */
export class RetriableDeliveryError extends DeliveryError {
  readonly retriable = true;

  constructor(code: string, message: string = code, options?: ErrorOptions) {
    super(code, message, options);
  }
}
