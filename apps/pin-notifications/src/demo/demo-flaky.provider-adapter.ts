import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import {
  NonRetriableDeliveryError,
  NotificationProvider,
  ProviderAdapter,
  RetriableDeliveryError,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '@pin/notifications-retry';
import { DEMO_FLAKY_PROVIDER_KEY } from '../../../../src/demo/demo-channels';
import { DEMO_OUTAGE_ERROR_CODE, demoProviderOutage } from './demo-provider-outage';

export type DemoFlakyOutcome = 'sent' | 'retriable' | 'non-retriable';

/**
 * What the demo provider does with a given attempt: about 60 % sent, 30 %
 * retriable, 10 % non-retriable. Derived from a hash of the notification id and
 * the attempt number, so a run can be replayed, and a retried notification gets
 * a fresh roll on its next attempt.
 */
export function demoFlakyOutcome(notificationId: string, attempt: number): DemoFlakyOutcome {
  const roll = hashToUnit(`${notificationId}:${attempt}`);
  if (roll < 0.6) return 'sent';
  if (roll < 0.9) return 'retriable';
  return 'non-retriable';
}

/**
 * A pretend e-mail provider for the demo, so that one run shows every outcome
 * in the log: `item-sent`, `item-retried` and `item-failed-terminal`. Its error
 * texts mention no address: the worker stores them in `last_error_message`.
 * During a `demoProviderOutage` every call fails retriably instead.
 */
@Injectable()
@NotificationProvider(DEMO_FLAKY_PROVIDER_KEY)
export class DemoFlakyProviderAdapter extends ProviderAdapter {
  async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    const attempt = message.attempts + 1;
    // A little latency, as a real provider has; the signal is honoured like an HTTP client would.
    await sleep(20 + Math.floor(hashToUnit(`latency:${message.id}:${attempt}`) * 180), undefined, {
      signal: context.signal,
    });
    if (demoProviderOutage.isActive) {
      throw new RetriableDeliveryError(
        DEMO_OUTAGE_ERROR_CODE,
        'demo provider answered 503 Service Unavailable (outage)',
      );
    }
    switch (demoFlakyOutcome(message.id, attempt)) {
      case 'sent':
        return { providerMessageId: `demo-${hashHex(context.idempotencyKey).slice(0, 20)}` };
      case 'retriable':
        throw new RetriableDeliveryError(
          'demo_provider_unavailable',
          'demo provider answered 503 Service Unavailable',
        );
      case 'non-retriable':
        throw new NonRetriableDeliveryError(
          'demo_recipient_rejected',
          'demo provider rejected the recipient (550 mailbox unavailable)',
        );
    }
  }
}

function hashHex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A number in [0, 1) from the first 32 bits of the hash. */
function hashToUnit(text: string): number {
  return parseInt(hashHex(text).slice(0, 8), 16) / 0x1_0000_0000;
}
