/**
 * Terminal Failed rows (Failed, next_attempt_at null), newest failure first.
 * $1 channel, $2 error code, $3 failed since (updated_at), $4 limit; null = any.
 * The address is returned for masking only, and with the subject and body for
 * redacting the stored error: the caller never shows any of them.
 */
export const TERMINAL_FAILURES_LIST_SQL = `
  SELECT id, channel, recipient_address, subject, body, attempts, last_error_code, last_error_message,
         updated_at AS failed_at, created_at
    FROM notifications
   WHERE status = 'Failed' AND next_attempt_at IS NULL
     AND ($1::text IS NULL OR channel = $1)
     AND ($2::text IS NULL OR last_error_code = $2)
     AND ($3::timestamptz IS NULL OR updated_at >= $3)
   ORDER BY updated_at DESC, id
   LIMIT $4`;
