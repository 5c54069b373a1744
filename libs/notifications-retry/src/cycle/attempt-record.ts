import type { AttemptHistoryEntry } from '../vocabulary/attempt-history-entry';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import { PROVIDER_TIMEOUT_CODE } from './attempt-delivery';
import type { RowTransition } from './row-transition';

/**
 * `AttemptHistoryEntry.outcome`: the attempt outcome's kind, a retriable
 * failure without an answer in time called a timeout (what an operator looks
 * for first), and a success recorded after its attempt was written off.
 * An interrupted call is not an attempt: its row is handed back, no entry.
 */
export type AttemptHistoryOutcome =
  Exclude<AttemptOutcome['kind'], 'interrupted'> | 'timeout' | 'late-success';

/** What a settlement knows of its attempt beyond the row's new values. */
export interface AttemptRecord {
  readonly outcome: AttemptHistoryOutcome;
  readonly httpStatus: number | null;
  /** The provider call's duration; null when no call was made (exhausted). */
  readonly latencyMs: number | null;
}

export function attemptRecord(
  outcome: Exclude<AttemptOutcome, { kind: 'interrupted' }>,
  latencyMs: number | null,
): AttemptRecord {
  const timedOut = outcome.kind === 'retriable' && outcome.errorCode === PROVIDER_TIMEOUT_CODE;
  return {
    outcome: timedOut ? 'timeout' : outcome.kind,
    httpStatus: 'httpStatus' in outcome ? (outcome.httpStatus ?? null) : null,
    latencyMs: latencyMs === null ? null : Math.max(0, Math.round(latencyMs)),
  };
}

/** The entry's fields the statement does not add (`attempt`, `at`). */
export type AttemptHistoryFields = Omit<AttemptHistoryEntry, 'attempt' | 'at'>;

/**
 * The fields of the entry written with `transition`: its error code and text
 * are the ones the row stores (already redacted; for a hold, the hold's), so
 * the history never says more than `last_error_message` did.
 */
export function attemptHistoryFields(
  record: AttemptRecord,
  transition: Pick<RowTransition, 'lastErrorCode' | 'lastErrorMessage'>,
): AttemptHistoryFields {
  return {
    outcome: record.outcome,
    errorCode: transition.lastErrorCode,
    httpStatus: record.httpStatus,
    error: transition.lastErrorMessage,
    latencyMs: record.latencyMs,
  };
}
