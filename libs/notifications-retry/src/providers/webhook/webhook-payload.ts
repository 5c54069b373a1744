import type { OutgoingNotification } from '../provider-adapter';

/**
 * The JSON body `WebhookProviderAdapter` POSTs, the contract with whoever
 * receives the webhook. `id` is also sent as the `Idempotency-Key` header.
 */
export interface WebhookPayload {
  readonly id: string;
  readonly tenantId: string | null;
  readonly channel: string;
  /** The recipient's address (e-mail, phone number, device token): personal data. */
  readonly to: string;
  readonly subject: string | null;
  readonly body: string;
}

export function toWebhookPayload(message: OutgoingNotification): WebhookPayload {
  return {
    id: message.id,
    tenantId: message.tenantId,
    channel: message.channel,
    to: message.recipientAddress,
    subject: message.subject,
    body: message.body,
  };
}
