import { backoffDelayMs } from '../channels/retry-backoff';
import type { ChannelConfig } from '../channels/channel-config';
import { NotificationStatus } from '../vocabulary/notification-status';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import type { ItemResult } from '../vocabulary/item-result';

/** The claimed row's state that a transition depends on. */
export interface ClaimedRowState {
  readonly status: NotificationStatus;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly scheduledAt: Date | null;
}

/** The new values of the row, and the event to emit with them. */
export interface RowTransition {
  readonly result: ItemResult;
  readonly status: NotificationStatus;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly scheduledAt: Date | null;
  readonly providerMessageId: string | null;
  readonly sentAt: Date | null;
  readonly lastErrorCode: string | null;
  readonly lastErrorMessage: string | null;
  /** Only final outcomes produce an event; an intermediate Failed does not. */
  readonly event: 'Sent' | 'Failed' | null;
}

/** A provider may ask for a pause, not to park people's notifications for months. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** INV-NTF-5, plus "stays as it was" for a deferred row. */
const ALLOWED: ReadonlyArray<readonly [NotificationStatus, NotificationStatus]> = [
  ['Failed', 'Sent'],
  ['Failed', 'Failed'],
  ['Pending', 'Sent'],
  ['Pending', 'Failed'],
  ['Pending', 'Pending'],
];

export function isAllowedTransition(from: NotificationStatus, to: NotificationStatus): boolean {
  return ALLOWED.some(([a, b]) => a === from && b === to);
}

/**
 * Decides what a claimed row becomes. Pure: `now`, the outcome and the jitter
 * sample (uniform in [0, 1], 0.5 = no jitter) are inputs. Only due rows are
 * claimed, so `row.status` is Pending or Failed.
 */
export function decideTransition(
  row: ClaimedRowState,
  channel: ChannelConfig,
  outcome: AttemptOutcome,
  now: Date,
  jitterSample = 0.5,
): RowTransition {
  if (row.status === NotificationStatus.Sent) {
    throw new Error('A Sent notification is never processed again');
  }
  const keep = {
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.nextAttemptAt,
    scheduledAt: row.scheduledAt,
    providerMessageId: null,
    sentAt: null,
  };
  const later = (delayMs: number): Date => new Date(now.getTime() + delayMs);

  switch (outcome.kind) {
    case 'sent':
      return {
        ...keep,
        result: 'sent',
        status: NotificationStatus.Sent,
        attempts: row.attempts + 1,
        nextAttemptAt: null,
        providerMessageId: outcome.providerMessageId,
        sentAt: now,
        lastErrorCode: null,
        lastErrorMessage: null,
        event: 'Sent',
      };

    case 'exhausted':
      return terminal(
        keep,
        row.attempts,
        'max_attempts_exhausted',
        'attempts already reached the channel maximum',
      );

    case 'non-retriable':
      return terminal(keep, row.attempts + 1, outcome.errorCode, outcome.errorMessage);

    case 'retriable': {
      const attempts = row.attempts + 1;
      if (attempts >= channel.maxAttempts) {
        // A call that may still deliver must not end the row for good: it would be terminal
        // Failed although the provider may yet report success. It waits like a throttled row
        // (the instance leaves it alone until the call settles); the next attempt decides.
        if (outcome.unsettled)
          return postponed(row, channel, keep, later, null, outcome, jitterSample);
        return terminal(keep, attempts, outcome.errorCode, outcome.errorMessage);
      }
      return {
        ...keep,
        result: 'retried',
        status: NotificationStatus.Failed,
        attempts,
        nextAttemptAt: later(backoffDelayMs(channel.backoff, attempts, jitterSample)),
        lastErrorCode: outcome.errorCode,
        lastErrorMessage: outcome.errorMessage,
        event: null,
      };
    }

    case 'throttled':
    case 'interrupted':
      return postponed(
        row,
        channel,
        keep,
        later,
        outcome.kind === 'throttled' ? outcome.retryAfterMs : null,
        outcome,
        jitterSample,
      );
  }
}

/**
 * The attempt does not count and the row keeps its status: a Failed row moves
 * its next_attempt_at, a Pending row its scheduled_at, to a usable Retry-After
 * or else the channel's backoff.
 */
function postponed(
  row: ClaimedRowState,
  channel: ChannelConfig,
  keep: Pick<
    RowTransition,
    'status' | 'attempts' | 'nextAttemptAt' | 'scheduledAt' | 'providerMessageId' | 'sentAt'
  >,
  later: (delayMs: number) => Date,
  retryAfterMs: number | null,
  outcome: { readonly errorCode: string; readonly errorMessage?: string; readonly kind: string },
  jitterSample: number,
): RowTransition {
  const backoffMs = backoffDelayMs(channel.backoff, Math.max(1, row.attempts + 1), jitterSample);
  // A usable Retry-After wins; a missing, zero or garbled one (NaN from a date header) falls back to backoff.
  const delayMs =
    retryAfterMs !== null && Number.isFinite(retryAfterMs) && retryAfterMs > 0
      ? Math.min(retryAfterMs, MAX_RETRY_AFTER_MS)
      : backoffMs;
  const at = later(delayMs);
  return {
    ...keep,
    result: 'deferred',
    nextAttemptAt: row.status === NotificationStatus.Failed ? at : row.nextAttemptAt,
    scheduledAt: row.status === NotificationStatus.Pending ? at : row.scheduledAt,
    lastErrorCode: outcome.errorCode,
    // An interrupted outcome has no message: its row's previous one is cleared.
    lastErrorMessage: outcome.errorMessage ?? null,
    event: null,
  };
}

function terminal(
  keep: Pick<RowTransition, 'scheduledAt' | 'providerMessageId' | 'sentAt'>,
  attempts: number,
  errorCode: string,
  errorMessage: string,
): RowTransition {
  return {
    ...keep,
    result: 'terminal',
    status: NotificationStatus.Failed,
    attempts,
    // Null next_attempt_at on a Failed row is what "terminal" means in the data contract.
    nextAttemptAt: null,
    lastErrorCode: errorCode,
    lastErrorMessage: errorMessage,
    event: 'Failed',
  };
}

/** `last_error_code` of a row whose provider was called but whose outcome could not be committed. */
export const UNRECORDED_OUTCOME_CODE = 'outcome_not_recorded';

/**
 * What a row becomes when its provider was called but the outcome's write
 * failed (say, the outbox refuses the event): recorded in a write of its
 * own, without the event. Left due, the row would be sent again by every cycle
 * for as long as the write keeps failing. Instead the attempt counts, as a
 * retriable failure would (`attempted.attempts`, the attempts the lost outcome
 * would have written), and the row waits out the channel's backoff. So repeats
 * are paced by the backoff and bounded by max_attempts: once they are used up,
 * the next cycle finishes the row as exhausted without calling the provider.
 * An attempt that did not count (throttled, interrupted) keeps the row's
 * status and only moves its due time. A lost success never uses up the row's
 * last attempt: exhausting it would end a delivered notification as Failed, so
 * it is sent again (the provider deduplicates on the NotificationId) until its
 * Sent can be recorded. `attempts` keeps counting calls made: a lost refusal
 * (a bad address) is asked once more rather than recorded as attempts that
 * never happened. Never produces an event.
 */
export function unrecordedOutcomeTransition(
  row: ClaimedRowState,
  channel: ChannelConfig,
  attempted: RowTransition,
  now: Date,
  jitterSample = 0.5,
): RowTransition {
  const attempts =
    attempted.result === 'sent'
      ? Math.min(attempted.attempts, Math.max(row.attempts, channel.maxAttempts - 1))
      : attempted.attempts;
  const counted = attempts > row.attempts;
  const status = counted ? NotificationStatus.Failed : row.status;
  const at = new Date(
    now.getTime() + backoffDelayMs(channel.backoff, Math.max(1, attempts), jitterSample),
  );
  return {
    result: counted ? 'retried' : 'deferred',
    status,
    attempts,
    nextAttemptAt: status === NotificationStatus.Failed ? at : row.nextAttemptAt,
    scheduledAt: status === NotificationStatus.Pending ? at : row.scheduledAt,
    providerMessageId: null,
    sentAt: null,
    lastErrorCode: UNRECORDED_OUTCOME_CODE,
    lastErrorMessage: 'the provider was called but the outcome could not be recorded',
    event: null,
  };
}
