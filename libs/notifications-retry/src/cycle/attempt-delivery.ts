import { createHash } from 'node:crypto';
import { DeliveryError } from '../providers/errors/delivery.error';
import { ThrottledDeliveryError } from '../providers/errors/throttled-delivery.error';
import type { OutgoingNotification, ProviderAdapter } from '../providers/provider-adapter';
import { isPlainErrorCode } from '../privacy/redact-stored-error';
import { containsPersonalData } from '../privacy/contains-personal-data';
import { redactPersonalData } from '../privacy/redact-personal-data';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import type { CycleInterrupt } from './cycle-interrupt';

/** The adapter did not answer within the channel timeout: its signal has fired. */
class ProviderTimeout extends Error {}
/** Nor within the settle margin after it: the attempt is written off while the call runs on. */
class UnsettledCall extends Error {}
/** The worker stopped the call for a reason of its own (shutdown grace over, lost lease). */
class WorkerInterrupt extends Error {}

/**
 * An adapter's error code if it is a plain identifier free of personal data;
 * anything else is replaced: an address, a push token or a phone number is a
 * plain identifier too, and adapters do pass them as codes.
 */
function safeCode(code: string, fallback: string, message: OutgoingNotification): string {
  return isPlainErrorCode(code, message) ? code : fallback;
}

const MIN_HTTP_STATUS = 100;
const MAX_HTTP_STATUS = 599;

/** The error's HTTP status when it is a real one (an adapter may pass anything). */
function httpStatusOf(error: DeliveryError): number | null {
  const status: unknown = error.httpStatus;
  return typeof status === 'number' &&
    Number.isInteger(status) &&
    status >= MIN_HTTP_STATUS &&
    status <= MAX_HTTP_STATUS
    ? status
    : null;
}

/** `HTTP 503: ` for an error that carries a real status, nothing otherwise. */
function httpStatusPrefix(status: number | null): string {
  return status === null ? '' : `HTTP ${status}: `;
}

/** The `httpStatus` field of an outcome: present only when there is a status. */
function withHttpStatus(status: number | null): { httpStatus?: number } {
  return status === null ? {} : { httpStatus: status };
}

/** The error code of an attempt that got no answer in time (the history calls it a timeout). */
export const PROVIDER_TIMEOUT_CODE = 'provider_timeout';

/** An answer that came after the channel timeout had fired the adapter's signal. */
export interface LateAnswer {
  /** The adapter resolved (a message id, or a result without one) or threw. */
  readonly answer: 'resolved' | 'rejected';
  /** Inside the settle margin: this answer is the attempt's outcome. Outside it: it came too late. */
  readonly recorded: boolean;
  /** Too late, but a success with a message id: it is also handed to `onLateSuccess`. */
  readonly delivered?: true;
}

/**
 * A success answered after the attempt was already decided without it: written
 * off at the end of the settle margin, or cut by the worker (shutdown grace
 * over, lost lease). The provider delivered the notification all the same.
 */
export interface LateSuccess {
  /** As it would have been stored had it come in time (see storableMessageId). */
  readonly providerMessageId: string;
  /** What the attempt was decided as meanwhile. */
  readonly writtenOffAs: 'timeout' | 'interrupted';
}

/** How long an answer may take and who hears about calls; see `attemptDelivery`. */
export interface SettleOptions {
  /**
   * How long after the timeout an answer is still awaited and taken as the
   * outcome. Default 0: the call is written off at the timeout.
   */
  readonly settleMarginMs?: number;
  /** Told of every adapter call as it starts, with a promise that settles when the call does. */
  readonly onCallStarted?: (settled: Promise<unknown>) => void;
  /** Told of every answer that came after the timeout, inside the margin or not. */
  readonly onLateAnswer?: (late: LateAnswer) => void;
  /**
   * Told of a success that came after the attempt was decided without it,
   * before the promise given to `onCallStarted` settles: whatever the listener
   * starts then (the write of the late success) can be chained to that promise.
   */
  readonly onLateSuccess?: (success: LateSuccess) => void;
}

/**
 * Calls the adapter once and classifies what happened. Never throws: an adapter
 * that throws a non-Error, resolves without a message id, or never settles is a
 * retriable failure, not a crashed cycle.
 *
 * At `timeoutMs` the adapter's signal fires, but its answer is still awaited
 * for the settle margin: a provider that delivered and answered a little late
 * is Sent, not retried (or, on the last attempt, failed for good). An adapter
 * that gives up on the signal with an error of its own is a timeout; one that
 * still says what the provider answered (a DeliveryError) is taken at its
 * word. No answer by the end of the margin is a retriable timeout, even if the
 * adapter ignores its signal and runs on (`onCallStarted` lets the caller keep
 * track of such calls).
 *
 * `interrupt` is the worker's own reason to stop the call (lost lease, ...);
 * when it fires the attempt is reported as interrupted at once, not as a failure.
 */
export async function attemptDelivery(
  adapter: ProviderAdapter,
  message: OutgoingNotification,
  timeoutMs: number,
  interrupt?: AbortSignal | CycleInterrupt,
  settle: SettleOptions = {},
): Promise<AttemptOutcome> {
  if (interrupt?.aborted) return { kind: 'interrupted', errorCode: 'worker_interrupted' };
  const settleMarginMs = settle.settleMarginMs ?? 0;
  const controller = new AbortController();
  let timedOut = false;
  // Set the moment the attempt is decided without the adapter's answer. Timers run only once the
  // microtasks of an earlier answer have run, so an answer that came first always wins the race.
  let writtenOff: LateSuccess['writtenOffAs'] | null = null;
  let timeoutTimer: NodeJS.Timeout | undefined;
  let settleTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  const cutOff = new Promise<never>((_, reject) => {
    timeoutTimer = setTimeout(() => {
      timedOut = true;
      controller.abort(new ProviderTimeout(`provider call exceeded ${timeoutMs} ms`));
    }, timeoutMs);
    settleTimer = setTimeout(() => {
      writtenOff ??= 'timeout';
      reject(
        new UnsettledCall(
          `no answer within the ${timeoutMs} ms timeout and the ${settleMarginMs} ms settle margin`,
        ),
      );
    }, timeoutMs + settleMarginMs);
    const onInterrupt = (): void => {
      writtenOff ??= 'interrupted';
      controller.abort(interrupt?.reason);
      reject(new WorkerInterrupt('provider call interrupted by the worker'));
    };
    unsubscribe = interrupt && subscribe(interrupt, onInterrupt);
  });
  // The losing side of the race must not surface as an unhandled rejection.
  cutOff.catch(() => undefined);

  const send = Promise.resolve().then(() =>
    adapter.send(message, { idempotencyKey: message.id, signal: controller.signal }),
  );
  // Registered before onCallStarted is told of the call: a late success is handed over before
  // anything chained to the call's settling runs.
  send
    .then(
      (result: unknown) => {
        const id = writtenOff ? messageIdOf(result) : null;
        const success = id === null ? null : storableMessageId(id, message);
        if (timedOut) {
          settle.onLateAnswer?.({
            answer: 'resolved',
            recorded: writtenOff === null,
            ...(success !== null ? { delivered: true as const } : {}),
          });
        }
        if (success !== null && writtenOff !== null) {
          settle.onLateSuccess?.({ providerMessageId: success, writtenOffAs: writtenOff });
        }
      },
      () =>
        timedOut && settle.onLateAnswer?.({ answer: 'rejected', recorded: writtenOff === null }),
    )
    .catch(() => undefined);
  settle.onCallStarted?.(send);

  try {
    const result: unknown = await Promise.race([send, cutOff]);
    const providerMessageId = messageIdOf(result);
    if (providerMessageId === null) {
      return {
        kind: 'retriable',
        errorCode: 'provider_invalid_result',
        errorMessage: 'provider adapter returned no providerMessageId',
      };
    }
    return { kind: 'sent', providerMessageId: storableMessageId(providerMessageId, message) };
  } catch (error) {
    if (
      error instanceof WorkerInterrupt ||
      (interrupt?.aborted && !(error instanceof UnsettledCall))
    ) {
      return { kind: 'interrupted', errorCode: 'worker_interrupted' };
    }
    if (error instanceof UnsettledCall) {
      return {
        kind: 'retriable',
        errorCode: PROVIDER_TIMEOUT_CODE,
        errorMessage: error.message,
        unsettled: true,
      };
    }
    if (timedOut && !(error instanceof DeliveryError)) {
      // The adapter gave up at our signal: what it threw is about the abort, not the provider.
      return {
        kind: 'retriable',
        errorCode: PROVIDER_TIMEOUT_CODE,
        errorMessage: `provider call exceeded ${timeoutMs} ms`,
      };
    }
    try {
      return classifyFailure(error, message);
    } catch {
      // A getter on the thrown object (message, code, retryAfterMs) threw: still a failure, not a crash.
      return {
        kind: 'retriable',
        errorCode: 'provider_error_unreadable',
        errorMessage: 'provider adapter threw an error that could not be read',
      };
    }
  } finally {
    clearTimeout(timeoutTimer);
    clearTimeout(settleTimer);
    unsubscribe?.();
  }
}

/** Told once when the worker's interrupt fires; returns the unsubscribe. */
function subscribe(interrupt: AbortSignal | CycleInterrupt, listener: () => void): () => void {
  if (!(interrupt instanceof AbortSignal)) return interrupt.subscribe(listener);
  interrupt.addEventListener('abort', listener, { once: true });
  return () => interrupt.removeEventListener('abort', listener);
}

/** The result's message id, or null when it has none a Sent row could carry. */
function messageIdOf(result: unknown): string | null {
  const id = (result as { providerMessageId?: unknown } | null | undefined)?.providerMessageId;
  return typeof id === 'string' && id.trim() !== '' ? id : null;
}

/** Longer ids are cut: a provider's message id is a reference, not a payload. */
export const MAX_PROVIDER_MESSAGE_ID_LENGTH = 1_000;

const REDACTED_MESSAGE_ID_PREFIX = 'redacted:';
const REDACTED_MESSAGE_ID_HASH_LENGTH = 16;

/**
 * The message was delivered, so its id must not be what fails the row's write:
 * PostgreSQL text cannot hold NUL (the UPDATE would fail, and the delivered row
 * be sent again), so NUL becomes U+FFFD, and the length is capped.
 *
 * An id that carries the row's address, subject or body (some providers build
 * ids from the recipient) is replaced by `redacted:` and 16 hex digits of
 * SHA-256 over the notification id, a NUL and the provider's id: never empty,
 * the same for the same answer, and an operator holding the provider's id (its
 * dashboard) and the notification id can compute it to find the row. The
 * notification id is in the hash so that the stand-in is not the bare hash of
 * an address (a hashed e-mail address is itself an identifier that tables map
 * back). Shapes (long numbers, `x@y.z`) are not held against ids: many ids are
 * long numbers or `<…@host>` Message-IDs, and a phone number or address in one
 * is the row's, which is found.
 */
function storableMessageId(id: string, message: OutgoingNotification): string {
  const storable = id.replaceAll('\u0000', '\uFFFD').slice(0, MAX_PROVIDER_MESSAGE_ID_LENGTH);
  if (!containsPersonalData(storable, message, { shapes: false })) return storable;
  const digest = createHash('sha256').update(message.id).update('\u0000').update(id).digest('hex');
  return `${REDACTED_MESSAGE_ID_PREFIX}${digest.slice(0, REDACTED_MESSAGE_ID_HASH_LENGTH)}`;
}

function classifyFailure(error: unknown, message: OutgoingNotification): AttemptOutcome {
  const safe = (text: string): string => redactPersonalData(text, message);
  // What is stored of a provider's error: a code, the HTTP status where there is one, a redacted text.
  const stored = (error: DeliveryError, status: number | null): string =>
    `${httpStatusPrefix(status)}${safe(error.message)}`;
  if (error instanceof ThrottledDeliveryError) {
    const status = httpStatusOf(error);
    return {
      kind: 'throttled',
      retryAfterMs: error.retryAfterMs,
      errorCode: safeCode(error.code, 'provider_throttled', message),
      errorMessage: stored(error, status),
      ...withHttpStatus(status),
    };
  }
  if (error instanceof DeliveryError) {
    const status = httpStatusOf(error);
    const fallback = error.retriable ? 'provider_error' : 'provider_rejected';
    return {
      kind: error.retriable ? 'retriable' : 'non-retriable',
      errorCode: safeCode(error.code, fallback, message),
      errorMessage: stored(error, status),
      ...withHttpStatus(status),
    };
  }
  if (error instanceof Error) {
    return { kind: 'retriable', errorCode: 'provider_error', errorMessage: safe(error.message) };
  }
  return {
    kind: 'retriable',
    errorCode: 'provider_error_non_error',
    errorMessage: safe(`provider adapter threw a non-Error value (${typeof error})`),
  };
}
