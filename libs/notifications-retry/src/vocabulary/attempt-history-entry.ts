/**
 * One attempt as `notifications.attempt_history` keeps it (DESIGN §2), newest
 * last: written by the same statement as the attempt's outcome, so the
 * history and the row never disagree. `error` is the redacted text stored in
 * `last_error_message`, never the provider's raw answer.
 */
export interface AttemptHistoryEntry {
  /** The row's `attempts` after this attempt (unchanged by one that does not count: throttled). */
  attempt: number;
  /** When the outcome was written, by the database clock (ISO 8601, UTC). */
  at: string;
  /**
   * What the attempt came to: `sent`, `retriable`, `timeout`, `non-retriable`,
   * `throttled`, `exhausted` (no call: attempts used up) or `late-success`.
   */
  outcome: string;
  errorCode: string | null;
  /** The provider's HTTP status, when its adapter gave one. */
  httpStatus: number | null;
  error: string | null;
  /** The provider call's duration as the worker saw it; null when no call was made. */
  latencyMs: number | null;
}

/** Entries a row keeps: the oldest go once it has more. */
export const ATTEMPT_HISTORY_LIMIT = 20;
