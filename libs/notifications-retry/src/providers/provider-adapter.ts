/** What an adapter gets to send. Address, subject and body are personal data: never log them. */
export interface OutgoingNotification {
  readonly id: string;
  readonly tenantId: string | null;
  readonly channel: string;
  readonly recipientAddress: string;
  readonly subject: string | null;
  readonly body: string;
  /** Attempts made before this one. */
  readonly attempts: number;
}

export interface SendContext {
  /** The NotificationId: hand it to the provider so that a resend after a crash is collapsed. */
  readonly idempotencyKey: string;
  /** Aborted at the channel's timeout or when the worker must stop; pass it to your HTTP client. */
  readonly signal: AbortSignal;
}

export interface SendResult {
  readonly providerMessageId: string;
}

/**
 * Sends one notification through one provider. Implement it in your own module,
 * mark the class `@NotificationProvider('provider-key')` and register it as a
 * provider; the retry module finds it.
 *
 * Throw `RetriableDeliveryError`, `NonRetriableDeliveryError` or
 * `ThrottledDeliveryError` to say what went wrong. Anything else thrown, and a
 * result without a message id, counts as retriable.
 */
export abstract class ProviderAdapter {
  abstract send(message: OutgoingNotification, context: SendContext): Promise<SendResult>;

  /** A feature flag: a disabled adapter is treated as absent and its channels' rows wait. */
  isEnabled(): boolean {
    return true;
  }
}
