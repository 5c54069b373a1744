import { Injectable } from '@nestjs/common';
import { NotificationProvider } from '../notification-provider.decorator';
import { ProviderAdapter, type OutgoingNotification, type SendResult } from '../provider-adapter';

export const IN_APP_PROVIDER_KEY = 'in_app';

/**
 * In-app notifications are already persisted when the row is written (the
 * inbox reads the `notifications` table), so delivery is only the status change.
 */
@Injectable()
@NotificationProvider(IN_APP_PROVIDER_KEY)
export class InAppProviderAdapter extends ProviderAdapter {
  send(message: OutgoingNotification): Promise<SendResult> {
    return Promise.resolve({ providerMessageId: `in_app:${message.id}` });
  }
}
