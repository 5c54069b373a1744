/** `cause`, and what a delivery error can say about the provider's answer. */
export interface DeliveryErrorOptions extends ErrorOptions {
  /**
   * The HTTP status the provider answered, for an HTTP provider. The worker
   * stores it before the text (`HTTP 503: …`) in `last_error_message`.
   */
  readonly httpStatus?: number;
}
