import { Inject, Injectable, type Type } from '@nestjs/common';
import {
  NonRetriableDeliveryError,
  NotificationProvider,
  ProviderAdapter,
  RetriableDeliveryError,
  ThrottledDeliveryError,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '@pin/notifications-retry';
import { CallLedger } from './call-ledger';
import { THROTTLE_RETRY_AFTER_MS } from './chaos-config';
import { faultFor } from './fault-plan';

export const CHAOS_SEED = Symbol('CHAOS_SEED');

/**
 * A provider that fails the way real ones do: 30 % retriable (5xx), 5 %
 * non-retriable (bad address), 5 % throttled (429 with Retry-After), 5 % hangs
 * past the channel timeout, the rest succeed; the answer to each call is fixed
 * by the seed, the notification id and the call's number. Like a real provider
 * it deduplicates on the idempotency key: once a send succeeded, every later
 * call for that notification returns the same message id.
 *
 * Every call is recorded in the ledger (committed on its own connection) before
 * the adapter answers. Error texts echo the recipient and the content, as real
 * providers' do, so the worker's redaction is put to work.
 */
@Injectable()
export class FaultInjectingProviderAdapter extends ProviderAdapter {
  constructor(
    private readonly ledger: CallLedger,
    @Inject(CHAOS_SEED) private readonly seed: number,
  ) {
    super();
  }

  async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    const id = context.idempotencyKey;
    const { callNo, priorProviderMessageId } = await this.ledger.started(id, message.attempts);
    if (priorProviderMessageId !== null) {
      await this.ledger.outcome(id, callNo, 'succeeded', priorProviderMessageId, true);
      return { providerMessageId: priorProviderMessageId };
    }
    const fault = faultFor(this.seed, id, callNo);
    switch (fault) {
      case 'success': {
        const providerMessageId = `chaos-${id.slice(0, 8)}-${callNo}`;
        await this.ledger.outcome(id, callNo, 'succeeded', providerMessageId);
        return { providerMessageId };
      }
      case 'retriable':
        await this.ledger.outcome(id, callNo, 'retriable');
        throw new RetriableDeliveryError(
          'http_503',
          `503 from upstream while delivering "${message.subject ?? ''}" to ${message.recipientAddress}: ${message.body}`,
        );
      case 'non-retriable':
        await this.ledger.outcome(id, callNo, 'non-retriable');
        throw new NonRetriableDeliveryError(
          'invalid_recipient',
          `recipient ${message.recipientAddress} rejected (subject ${message.subject ?? ''})`,
        );
      case 'throttled':
        await this.ledger.outcome(id, callNo, 'throttled');
        throw new ThrottledDeliveryError(
          THROTTLE_RETRY_AFTER_MS,
          'http_429',
          `429 too many requests for ${message.recipientAddress}; body was ${message.body}`,
        );
      case 'hang':
        await this.ledger.outcome(id, callNo, 'hang');
        // Never answers: the worker's timeout (or shutdown) aborts the signal.
        await new Promise<void>((resolve) => {
          if (context.signal.aborted) return resolve();
          context.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        throw new RetriableDeliveryError(
          'connection_reset',
          `socket hang up talking about ${message.recipientAddress}`,
        );
    }
  }
}

/** The same adapter under another provider key, declared the way a team would. */
export function faultInjectingAdapterFor(providerKey: string): Type<FaultInjectingProviderAdapter> {
  @Injectable()
  @NotificationProvider(providerKey)
  class KeyedFaultInjectingAdapter extends FaultInjectingProviderAdapter {}
  Object.defineProperty(KeyedFaultInjectingAdapter, 'name', {
    value: `FaultInjecting(${providerKey})`,
  });
  return KeyedFaultInjectingAdapter;
}
