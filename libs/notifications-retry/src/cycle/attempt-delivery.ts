import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DeliveryError } from '../providers/errors/delivery.error';
import { ThrottledDeliveryError } from '../providers/errors/throttled-delivery.error';
import type { OutgoingNotification, ProviderAdapter } from '../providers/provider-adapter';
import { isPlainErrorCode } from '../privacy/redact-stored-error';
import { containsPersonalData } from '../privacy/contains-personal-data';
import { redactPersonalData } from '../privacy/redact-personal-data';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import type { CycleInterrupt } from './cycle-interrupt';

/** The adapter did not answer within the channel timeout: the reason its signal carries. */
class ProviderTimeout extends Error {}

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
export function attemptDelivery(
  adapter: ProviderAdapter,
  message: OutgoingNotification,
  timeoutMs: number,
  interrupt?: AbortSignal | CycleInterrupt,
  settle: SettleOptions = {},
): Promise<AttemptOutcome> {
  if (interrupt?.aborted) return Promise.resolve(INTERRUPTED);
  return new Promise((resolve) =>
    new DeliveryAttempt(adapter, message, timeoutMs, interrupt, settle, resolve).start(),
  );
}

const INTERRUPTED: AttemptOutcome = { kind: 'interrupted', errorCode: 'worker_interrupted' };

/**
 * One call's state, with every way it can end as a method: the adapter's
 * answer, its failure, the timeout, the end of the settle margin, the worker's
 * interrupt. The first to decide resolves the attempt; what comes after it is
 * a late answer. One object, one timer (two without a settle margin) and one
 * promise of the attempt's own per call: hundreds are in flight at once, and
 * whatever each keeps alive the young generation copies at every scavenge.
 */
class DeliveryAttempt {
  private readonly controller = new AbortController();
  private readonly startedAt = performance.now();
  private readonly settleMarginMs: number;
  private timedOut = false;
  // Set the moment the attempt is decided without the adapter's answer. Timers run only once the
  // microtasks of an earlier answer have run, so an answer that came first always wins.
  private writtenOff: LateSuccess['writtenOffAs'] | null = null;
  private decided = false;
  private timeoutTimer: NodeJS.Timeout | undefined;
  // Set when the signal fires, for what is left of the margin; at the start when there is none.
  private settleTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly adapter: ProviderAdapter,
    private readonly message: OutgoingNotification,
    private readonly timeoutMs: number,
    private readonly interrupt: AbortSignal | CycleInterrupt | undefined,
    private readonly settle: SettleOptions,
    private readonly resolve: (outcome: AttemptOutcome) => void,
  ) {
    this.settleMarginMs = settle.settleMarginMs ?? 0;
  }

  start(): void {
    this.timeoutTimer = setTimeout(timeoutFired, this.timeoutMs, this);
    // Without a margin the write-off comes with the timeout: set now, it runs right after the
    // timeout's timer and the microtasks the abort sets off, before any I/O can bring an answer.
    if (this.settleMarginMs <= 0) {
      this.settleTimer = setTimeout(settleMarginEnded, this.timeoutMs, this);
    }
    if (this.interrupt) this.unsubscribe = subscribe(this.interrupt, () => this.interrupted());
    let send: Promise<unknown>;
    try {
      send = Promise.resolve(
        this.adapter.send(this.message, {
          idempotencyKey: this.message.id,
          signal: this.controller.signal,
        }),
      );
    } catch (error) {
      send = Promise.reject(error);
    }
    // Registered before onCallStarted is told of the call: a late success is handed over before
    // anything chained to the call's settling runs.
    send.then(
      (result: unknown) => this.answered(result),
      (error: unknown) => this.failed(error),
    );
    this.settle.onCallStarted?.(send);
  }

  /**
   * The signal fires; the answer is still awaited for the settle margin, less
   * however late this timer ran: the margin ends when it would have had both
   * timers been set at the start.
   */
  timedOutNow(): void {
    this.timedOut = true;
    this.controller.abort(new ProviderTimeout(`provider call exceeded ${this.timeoutMs} ms`));
    if (this.decided || this.settleTimer) return;
    const lateMs = Math.max(0, performance.now() - this.startedAt - this.timeoutMs);
    // Whole milliseconds: Node keeps one timer list per duration.
    const leftMs = Math.ceil(Math.max(0, this.settleMarginMs - lateMs));
    this.settleTimer = setTimeout(settleMarginEnded, leftMs, this);
  }

  settleMarginEnded(): void {
    this.writtenOff ??= 'timeout';
    this.decide({
      kind: 'retriable',
      errorCode: PROVIDER_TIMEOUT_CODE,
      errorMessage: `no answer within the ${this.timeoutMs} ms timeout and the ${this.settleMarginMs} ms settle margin`,
      unsettled: true,
    });
  }

  private interrupted(): void {
    this.writtenOff ??= 'interrupted';
    this.controller.abort(this.interrupt?.reason);
    this.decide(INTERRUPTED);
  }

  private answered(result: unknown): void {
    try {
      if (this.writtenOff === null) {
        if (this.timedOut)
          this.tell(this.settle.onLateAnswer, { answer: 'resolved', recorded: true });
        this.decide(answerOutcome(result, this.message));
        return;
      }
      const id = messageIdOf(result);
      const success = id === null ? null : storableMessageId(id, this.message);
      if (this.timedOut) {
        this.tell(this.settle.onLateAnswer, {
          answer: 'resolved',
          recorded: false,
          ...(success !== null ? { delivered: true as const } : {}),
        });
      }
      if (success !== null) {
        this.tell(this.settle.onLateSuccess, {
          providerMessageId: success,
          writtenOffAs: this.writtenOff,
        });
      }
    } catch (error) {
      // A getter on the result (providerMessageId) threw: the adapter failed after all.
      this.failedWith(error);
    }
  }

  private failed(error: unknown): void {
    if (this.timedOut) {
      this.tell(this.settle.onLateAnswer, {
        answer: 'rejected',
        recorded: this.writtenOff === null,
      });
    }
    if (this.writtenOff !== null) return;
    // Decided a microtask later: a failure may be the interrupt's doing (a connection torn down by
    // the shutdown), and an interrupt that fires as the failure comes in makes it an interruption.
    queueMicrotask(() => this.failedWith(error));
  }

  private failedWith(error: unknown): void {
    if (this.writtenOff !== null) return;
    if (this.interrupt?.aborted) return this.decide(INTERRUPTED);
    try {
      this.decide(this.failureOutcome(error));
    } catch {
      // Reading the thrown object threw (a getter, a Proxy's trap under instanceof): still a
      // failure, not a crash. This runs in a microtask of its own, where a throw would be uncaught.
      this.decide(UNREADABLE);
    }
  }

  private failureOutcome(error: unknown): AttemptOutcome {
    if (this.timedOut && !(error instanceof DeliveryError)) {
      // The adapter gave up at our signal: what it threw is about the abort, not the provider.
      return {
        kind: 'retriable',
        errorCode: PROVIDER_TIMEOUT_CODE,
        errorMessage: `provider call exceeded ${this.timeoutMs} ms`,
      };
    }
    return classifyFailure(error, this.message);
  }

  /** A listener that throws must not keep the attempt from being decided. */
  private tell<T>(listener: ((value: T) => void) | undefined, value: T): void {
    try {
      listener?.(value);
    } catch {
      // The caller's listener failed; the attempt's outcome does not depend on it.
    }
  }

  private decide(outcome: AttemptOutcome): void {
    if (this.decided) return;
    this.decided = true;
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.settleTimer);
    this.unsubscribe?.();
    this.resolve(outcome);
  }
}

// Timer callbacks take the attempt as their argument: no closure per call.
function timeoutFired(attempt: DeliveryAttempt): void {
  attempt.timedOutNow();
}

function settleMarginEnded(attempt: DeliveryAttempt): void {
  attempt.settleMarginEnded();
}

const UNREADABLE: AttemptOutcome = {
  kind: 'retriable',
  errorCode: 'provider_error_unreadable',
  errorMessage: 'provider adapter threw an error that could not be read',
};

/** What an answer in time comes to: Sent with a storable id, or a failure without one. */
function answerOutcome(result: unknown, message: OutgoingNotification): AttemptOutcome {
  const providerMessageId = messageIdOf(result);
  if (providerMessageId === null) {
    return {
      kind: 'retriable',
      errorCode: 'provider_invalid_result',
      errorMessage: 'provider adapter returned no providerMessageId',
    };
  }
  return { kind: 'sent', providerMessageId: storableMessageId(providerMessageId, message) };
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
