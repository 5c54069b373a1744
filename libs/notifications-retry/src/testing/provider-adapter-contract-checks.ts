import { DeliveryError } from '../providers/errors/delivery.error';
import { ThrottledDeliveryError } from '../providers/errors/throttled-delivery.error';
import type { OutgoingNotification } from '../providers/provider-adapter';
import { containsPersonalData } from '../privacy/contains-personal-data';
import type { PersonalValues } from '../privacy/personal-values';
import { describeThrown } from './describe-thrown';
import type { ResolvedContractOptions } from './provider-adapter-contract-options';
import type {
  ProviderAdapterContractCapabilities,
  ProviderAdapterContractHarness,
} from './provider-adapter-contract-harness';
import { sampleNotification } from './sample-notification';
import { settleWithin, type Settlement } from './settle-within';

export type ProviderAdapterContractCheckName =
  | 'success-returns-message-id'
  | 'idempotency-key-reaches-provider'
  | 'retriable-failure-is-retriable'
  | 'non-retriable-failure-is-non-retriable'
  | 'failure-errors-omit-personal-data'
  | 'throttling-carries-retry-after'
  | 'abort-settles-promptly';

export interface ProviderAdapterContractCheck {
  readonly name: ProviderAdapterContractCheckName;
  /** The test title `describeProviderAdapterContract` gives it. */
  readonly title: string;
  /** The harness capability the check needs; null when every harness can run it. */
  readonly requires: keyof ProviderAdapterContractCapabilities | null;
  /** A violation's message, or null when the adapter behaved. */
  run(
    harness: ProviderAdapterContractHarness,
    options: ResolvedContractOptions,
  ): Promise<string | null>;
}

/** What the worker relies on from every adapter (attempt-delivery and the row transition). */
export const PROVIDER_ADAPTER_CONTRACT_CHECKS: readonly ProviderAdapterContractCheck[] = [
  {
    name: 'success-returns-message-id',
    title: 'a successful send returns a non-empty providerMessageId',
    requires: null,
    async run(harness, options) {
      await harness.respondWith('success');
      const outcome = await send(harness, sampleNotification(), options.callTimeoutMs);
      if (outcome.kind !== 'resolved') return unexpected(outcome, 'answered success', options);
      const id = (outcome.value as { providerMessageId?: unknown } | null | undefined)
        ?.providerMessageId;
      return typeof id === 'string' && id.trim() !== ''
        ? null
        : 'resolved without a non-empty string providerMessageId (the worker counts that as a failure)';
    },
  },
  {
    name: 'idempotency-key-reaches-provider',
    title: 'hands the idempotency key (the NotificationId) to the provider',
    requires: 'idempotencyKey',
    async run(harness, options) {
      await harness.respondWith('success');
      const message = sampleNotification();
      const outcome = await send(harness, message, options.callTimeoutMs);
      if (outcome.kind !== 'resolved') return unexpected(outcome, 'answered success', options);
      const received = await harness.lastIdempotencyKey();
      if (received === message.id) return null;
      return `the provider received idempotency key ${received === undefined ? '(none)' : JSON.stringify(received)}, not the notification id ${message.id}: a resend after a crash would deliver twice`;
    },
  },
  {
    name: 'retriable-failure-is-retriable',
    title: 'a retriable provider failure is thrown as a retriable DeliveryError',
    requires: 'failures',
    async run(harness, options) {
      await harness.respondWith('retriable');
      const outcome = await send(harness, sampleNotification(), options.callTimeoutMs);
      if (outcome.kind !== 'rejected') return unexpected(outcome, 'failed retriably', options);
      const error = outcome.error;
      if (
        error instanceof DeliveryError &&
        error.retriable &&
        !(error instanceof ThrottledDeliveryError)
      ) {
        return codeProblem(error);
      }
      return `threw ${describeThrown(error)} where a RetriableDeliveryError (or a DeliveryError with retriable = true) was due`;
    },
  },
  {
    name: 'non-retriable-failure-is-non-retriable',
    title: 'a permanent provider failure is thrown as a non-retriable DeliveryError',
    requires: 'failures',
    async run(harness, options) {
      await harness.respondWith('non-retriable');
      const outcome = await send(harness, sampleNotification(), options.callTimeoutMs);
      if (outcome.kind !== 'rejected') return unexpected(outcome, 'failed permanently', options);
      const error = outcome.error;
      if (error instanceof DeliveryError && !error.retriable) return codeProblem(error);
      return `threw ${describeThrown(error)} where a NonRetriableDeliveryError was due: the worker would retry a send that cannot succeed`;
    },
  },
  {
    name: 'failure-errors-omit-personal-data',
    title: "failure errors do not carry the recipient's address, the subject or the body",
    requires: 'failures',
    async run(harness, options) {
      const problems: string[] = [];
      for (const behaviour of ['retriable', 'non-retriable'] as const) {
        await harness.respondWith(behaviour);
        const message = sampleNotification();
        const outcome = await send(harness, message, options.callTimeoutMs);
        // Anything but an Error is reported by the classification checks.
        if (outcome.kind !== 'rejected' || !(outcome.error instanceof Error)) continue;
        const leaked = personalValuesIn(outcome.error, message);
        if (leaked.length > 0) {
          problems.push(
            `the ${behaviour} error's message or code contains the ${leaked.join(', ')}`,
          );
        }
      }
      return problems.length === 0 ? null : problems.join('; ');
    },
  },
  {
    name: 'throttling-carries-retry-after',
    title: 'a throttling answer is thrown as a ThrottledDeliveryError with the retry-after',
    requires: 'throttling',
    async run(harness, options) {
      await harness.respondWith('throttled', { retryAfterMs: options.retryAfterMs });
      const outcome = await send(harness, sampleNotification(), options.callTimeoutMs);
      if (outcome.kind !== 'rejected') return unexpected(outcome, 'throttled', options);
      const error = outcome.error;
      if (!(error instanceof ThrottledDeliveryError)) {
        return `threw ${describeThrown(error)} where a ThrottledDeliveryError was due: throttling would use up attempts`;
      }
      const { retryAfterMs } = error;
      if (typeof retryAfterMs === 'number' && retryAfterMs >= options.retryAfterMs) return null;
      return `ThrottledDeliveryError.retryAfterMs is ${String(retryAfterMs)}, but the provider asked for ${options.retryAfterMs} ms`;
    },
  },
  {
    name: 'abort-settles-promptly',
    title: 'stops waiting for a provider that hangs once the signal aborts',
    requires: 'hanging',
    async run(harness, options) {
      await harness.respondWith('hang');
      const controller = new AbortController();
      const call = sendWith(harness, sampleNotification(), controller.signal);
      const early = await settleWithin(call, options.abortAfterMs);
      if (early.kind !== 'pending') {
        controller.abort();
        return `settled (${describeSettlement(early)}) before the abort although the provider never answered: the harness does not hang, or the adapter does not wait for the provider`;
      }
      const abortedAt = performance.now();
      controller.abort(new Error('contract check: provider call timed out'));
      const late = await settleWithin(call, options.settleWithinMs);
      const afterMs = Math.round(performance.now() - abortedAt);
      if (late.kind === 'pending') {
        return `still running ${options.settleWithinMs} ms after its signal aborted: pass context.signal to the provider call`;
      }
      if (late.kind === 'resolved') {
        return `resolved after the abort although the provider never answered`;
      }
      if (late.error instanceof DeliveryError && !late.error.retriable) {
        return `rejected after the abort (${afterMs} ms) with ${describeThrown(late.error)}: an aborted call must stay retriable`;
      }
      return null;
    },
  },
];

function sendWith(
  harness: ProviderAdapterContractHarness,
  message: OutgoingNotification,
  signal: AbortSignal,
): Promise<unknown> {
  // Through a then() so that an adapter which throws instead of rejecting is judged like one that rejects.
  return Promise.resolve().then(() =>
    harness.adapter.send(message, { idempotencyKey: message.id, signal }),
  );
}

async function send(
  harness: ProviderAdapterContractHarness,
  message: OutgoingNotification,
  timeoutMs: number,
): Promise<Settlement<unknown>> {
  const controller = new AbortController();
  const outcome = await settleWithin(sendWith(harness, message, controller.signal), timeoutMs);
  // Lets a well-behaved adapter release what it holds; the pending outcome is reported all the same.
  if (outcome.kind === 'pending') controller.abort(new Error('contract check: call timed out'));
  return outcome;
}

function unexpected(
  outcome: Settlement<unknown>,
  providerDid: string,
  options: ResolvedContractOptions,
): string {
  return outcome.kind === 'pending'
    ? `did not settle within ${options.callTimeoutMs} ms although the provider ${providerDid}`
    : `${describeSettlement(outcome)} although the provider ${providerDid}`;
}

function describeSettlement(outcome: Settlement<unknown>): string {
  if (outcome.kind === 'resolved') return 'resolved';
  if (outcome.kind === 'rejected') return `rejected with ${describeThrown(outcome.error)}`;
  return 'still pending';
}

function codeProblem(error: DeliveryError): string | null {
  return typeof error.code === 'string' && error.code.trim() !== ''
    ? null
    : `threw ${error.constructor.name} without a code: operators read last_error_code`;
}

/**
 * By the worker's rules (any 8-character run, any case, URL- and JSON-decoded):
 * what the worker would redact or replace is what the adapter should not have
 * put there. Shapes are not counted: an adapter's own texts may name addresses.
 */
function personalValuesIn(error: Error, message: OutgoingNotification): string[] {
  const code: unknown = (error as { code?: unknown }).code;
  const text = `${error.message}\n${typeof code === 'string' ? code : ''}`;
  const holds = (value: PersonalValues): boolean =>
    containsPersonalData(text, { ...value, id: message.id }, { shapes: false });
  const found: string[] = [];
  if (holds({ recipientAddress: message.recipientAddress })) found.push('recipient address');
  if (holds({ subject: message.subject })) found.push('subject');
  if (holds({ body: message.body })) found.push('body');
  return found;
}
