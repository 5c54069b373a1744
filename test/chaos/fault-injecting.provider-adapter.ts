import { performance } from 'node:perf_hooks';
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
import { CallLedger, type StartedCall } from './call-ledger';
import {
  ANSWER_AFTER_ABORT_MS,
  CHAOS_CHANNELS,
  LATE_ANSWER_AFTER_TIMEOUT_MS,
  ANSWER_AFTER_MARGIN_MS,
  CHAOS_WORKER,
  THROTTLE_RETRY_AFTER_MS,
} from './chaos-config';
import { delayFor, faultFor, type FaultKind } from './fault-plan';
import { PERSONAL_DATA_ECHOES as echo } from './personal-data-echoes';

export const CHAOS_SEED = Symbol('CHAOS_SEED');

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * A provider that fails the way real ones do, each call's answer fixed by the
 * seed, the notification id and the call's number (shares in fault-plan.ts):
 * retriable (5xx), non-retriable (bad address), throttled (429 with
 * Retry-After), hangs cut at the channel timeout, answers that come late
 * (success after the timeout, ignoring the signal; success just after the
 * signal fired), and error texts and codes that echo the recipient or the
 * content verbatim or transformed (URL-encoded, JSON-escaped, cut, upper-cased,
 * as a code), as real providers' do, so the worker's redaction is put to work.
 * Like a real provider it deduplicates on the idempotency key: once a send
 * succeeded, every later call for that notification returns the same message id.
 *
 * Every call is recorded in the ledger (committed on its own connection) before
 * the adapter answers. A late success is recorded when the provider accepts
 * the message, at the start of the call; its `answered` event when the adapter
 * finally returns.
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
    const enteredAt = performance.now();
    const id = context.idempotencyKey;
    const call = await this.ledger.started(id, message.attempts);
    if (call.priorProviderMessageId !== null) {
      await this.ledger.record(call, id, 'succeeded', 'deduplicated', call.priorProviderMessageId);
      return { providerMessageId: call.priorProviderMessageId };
    }
    const fault = faultFor(this.seed, id, call.callNo);
    const providerMessageId = `chaos-${id.slice(0, 8)}-${call.callNo}`;
    switch (fault) {
      case 'success':
        await this.ledger.record(call, id, 'succeeded', fault, providerMessageId);
        return { providerMessageId };
      case 'late-success': {
        await this.ledger.record(call, id, 'succeeded', fault, providerMessageId);
        const timeoutMs = CHAOS_CHANNELS.find((c) => c.key === message.channel)?.timeoutMs ?? 0;
        const lateMs = delayFor(this.seed, id, call.callNo, LATE_ANSWER_AFTER_TIMEOUT_MS);
        await sleep(enteredAt + timeoutMs + lateMs - performance.now());
        return this.answer(call, id, fault, providerMessageId);
      }
      case 'success-after-margin': {
        await this.ledger.record(call, id, 'succeeded', fault, providerMessageId);
        const timeoutMs = CHAOS_CHANNELS.find((c) => c.key === message.channel)?.timeoutMs ?? 0;
        const lateMs = delayFor(this.seed, id, call.callNo, ANSWER_AFTER_MARGIN_MS);
        await sleep(
          enteredAt + timeoutMs + CHAOS_WORKER.settleMarginMs + lateMs - performance.now(),
        );
        return this.answer(call, id, fault, providerMessageId);
      }
      case 'success-after-abort':
        await this.ledger.record(call, id, 'succeeded', fault, providerMessageId);
        await aborted(context.signal);
        await sleep(delayFor(this.seed, id, call.callNo, ANSWER_AFTER_ABORT_MS));
        return this.answer(call, id, fault, providerMessageId);
      case 'hang':
        await this.ledger.record(call, id, 'hang', fault);
        // Never answers on its own: the worker's timeout (or shutdown) aborts the signal.
        await aborted(context.signal);
        await this.ledger.record(call, id, 'answered', fault);
        throw new RetriableDeliveryError(
          'connection_reset',
          `socket hang up talking about ${message.recipientAddress}`,
        );
      default:
        await this.ledger.record(call, id, outcomeOf(fault), fault);
        throw failure(fault, message);
    }
  }

  private async answer(
    call: StartedCall,
    id: string,
    fault: FaultKind,
    providerMessageId: string,
  ): Promise<SendResult> {
    await this.ledger.record(call, id, 'answered', fault, providerMessageId);
    return { providerMessageId };
  }
}

function outcomeOf(fault: FaultKind): 'retriable' | 'non-retriable' | 'throttled' {
  switch (fault) {
    case 'non-retriable':
    case 'echo-url-address':
    case 'echo-half-address':
      return 'non-retriable';
    case 'throttled':
    case 'echo-body-prefix':
      return 'throttled';
    default:
      return 'retriable';
  }
}

/** The error a failing fault throws; its class matches `outcomeOf`. */
function failure(fault: FaultKind, message: OutgoingNotification): Error {
  const values = { ...message, subject: message.subject ?? '' };
  switch (fault) {
    case 'non-retriable':
      return new NonRetriableDeliveryError(
        'invalid_recipient',
        `recipient ${message.recipientAddress} rejected (subject ${message.subject ?? ''})`,
      );
    case 'throttled':
      return new ThrottledDeliveryError(
        THROTTLE_RETRY_AFTER_MS,
        'http_429',
        `429 too many requests for ${message.recipientAddress}; body was ${message.body}`,
      );
    case 'echo-url-address':
      return new NonRetriableDeliveryError(
        'invalid_recipient',
        `GET /v1/recipients/${echo.urlEncodedAddress(values)} answered 404`,
      );
    case 'echo-json-body':
      return new RetriableDeliveryError(
        'http_500',
        `500 from upstream; request was ${echo.jsonEscapedBody(values)}`,
      );
    case 'echo-body-prefix':
      return new ThrottledDeliveryError(
        THROTTLE_RETRY_AFTER_MS,
        'http_429',
        `429 for the message beginning "${echo.bodyPrefix(values)}"`,
      );
    case 'echo-upper-subject':
      return new RetriableDeliveryError(
        'http_502',
        `BAD GATEWAY WHILE SENDING ${echo.upperCasedSubject(values)}`,
      );
    case 'echo-half-address':
      return new NonRetriableDeliveryError(
        'recipient_rejected',
        `no such recipient: ${echo.halfAddress(values)}…`,
      );
    case 'echo-code-address':
      return new RetriableDeliveryError(echo.addressAsCode(values), 'recipient unreachable');
    default:
      return new RetriableDeliveryError(
        'http_503',
        `503 from upstream while delivering "${message.subject ?? ''}" to ${message.recipientAddress}: ${message.body}`,
      );
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
