import { DeliveryError } from './delivery.error';
import type { DeliveryErrorOptions } from './delivery-error-options';

/**
 * The provider asked us to slow down (HTTP 429). The attempt does not count:
 * a provider's bad hour must not burn people's attempts.
 */
export class ThrottledDeliveryError extends DeliveryError {
  readonly retriable = true;

  constructor(
    readonly retryAfterMs: number | null = null,
    code = 'provider_throttled',
    message: string = code,
    options?: DeliveryErrorOptions,
  ) {
    super(code, message, options);
  }
}
