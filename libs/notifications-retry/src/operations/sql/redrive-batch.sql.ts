/**
 * One batch of a redrive, atomically: terminal Failed rows matching the filter
 * that no worker holds (no live claim, no row lock: SKIP LOCKED) become Failed
 * and due now with a fresh attempt budget (INV-NTF-5: Failed→Failed), and what
 * each row had before goes to notification_redriven_rows under the action.
 * A reset row is no longer terminal, so the next batch (and a second run of
 * the same redrive) cannot take it again.
 * $1 channel, $2 error code, $3 failed since, $4 ids; null = any; $5 batch size; $6 action id.
 */
export const REDRIVE_BATCH_SQL = `
  WITH picked AS (
    SELECT id, attempts, last_error_code, last_error_message
      FROM notifications
     WHERE status = 'Failed' AND next_attempt_at IS NULL
     AND ($1::text IS NULL OR channel = $1)
     AND ($2::text IS NULL OR last_error_code = $2)
     AND ($3::timestamptz IS NULL OR updated_at >= $3)
       AND ($4::uuid[] IS NULL OR id = ANY($4))
       AND NOT (claim_token IS NOT NULL AND claim_expires_at > now())
     ORDER BY updated_at, id
     LIMIT $5
       FOR UPDATE SKIP LOCKED
  ),
  audit AS (
    INSERT INTO notification_redriven_rows
           (action_id, notification_id, previous_attempts, previous_error_code, previous_error_message)
    SELECT $6::uuid, id, attempts, last_error_code, last_error_message FROM picked
  )
  UPDATE notifications AS n
     SET next_attempt_at = now(),
         attempts = 0,
         last_error_code = NULL,
         last_error_message = NULL,
         claim_token = NULL,
         claim_expires_at = NULL,
         updated_at = now()
    FROM picked
   WHERE n.id = picked.id
  RETURNING n.id`;
