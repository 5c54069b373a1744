import { Injectable } from '@nestjs/common';
import {
  NotificationProvider,
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '@pin/notifications-retry';

export const SCRIPTED_PROVIDER_KEY = 'scripted';

export interface RecordedCall {
  readonly message: OutgoingNotification;
  readonly idempotencyKey: string;
}

type Behaviour = (
  message: OutgoingNotification,
  context: SendContext,
) => Promise<SendResult> | SendResult;

/**
 * A provider whose answer each test scripts. Records every call, so tests can
 * count sends per notification.
 */
@Injectable()
@NotificationProvider(SCRIPTED_PROVIDER_KEY)
export class ScriptedProviderAdapter extends ProviderAdapter {
  readonly calls: RecordedCall[] = [];
  private behaviour: Behaviour = (message) => ({ providerMessageId: `scripted-${message.id}` });

  respondWith(behaviour: Behaviour): void {
    this.behaviour = behaviour;
  }

  async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    this.calls.push({ message, idempotencyKey: context.idempotencyKey });
    return this.behaviour(message, context);
  }

  callsFor(id: string): number {
    return this.calls.filter((call) => call.message.id === id).length;
  }
}
