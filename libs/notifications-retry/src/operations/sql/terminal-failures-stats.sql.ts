/** Terminal Failed rows by channel × error code. $1 channel, $2 error code, $3 failed since; null = any. */
export const TERMINAL_FAILURES_STATS_SQL = `
  SELECT channel, last_error_code AS error_code, count(*)::int AS count,
         min(updated_at) AS oldest, max(updated_at) AS newest
    FROM notifications
   WHERE status = 'Failed' AND next_attempt_at IS NULL
     AND ($1::text IS NULL OR channel = $1)
     AND ($2::text IS NULL OR last_error_code = $2)
     AND ($3::timestamptz IS NULL OR updated_at >= $3)
   GROUP BY channel, last_error_code
   ORDER BY count DESC, channel, error_code NULLS FIRST`;
