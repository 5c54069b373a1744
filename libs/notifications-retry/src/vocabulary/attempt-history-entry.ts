/**
 * One attempt in `notifications.attempt_history` (newest last, at most
 * {@link ATTEMPT_HISTORY_LIMIT}): written by the statement that writes the
 * outcome, the error text redacted like `last_error_message`.
 */
export type AttemptHistoryEntry = {
  attempt: number;
  at: string /* ISO */;
  outcome: string;
  errorCode: string | null;
  httpStatus: number | null;
  error: string | null;
  latencyMs: number | null;
};

export const ATTEMPT_HISTORY_LIMIT = 20;
