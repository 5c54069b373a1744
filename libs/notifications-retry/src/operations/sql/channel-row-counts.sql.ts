/**
 * Per channel, by the database clock: the failed backlog (Failed awaiting a
 * retry), rows due now, deferred Pending rows, terminal Failed rows and rows
 * under a live claim. Sent rows are left out before grouping.
 */
export const CHANNEL_ROW_COUNTS_SQL = `
  SELECT channel,
         count(*) FILTER (WHERE status = 'Failed' AND next_attempt_at IS NOT NULL)::int AS backlog,
         count(*) FILTER (WHERE due_at <= now())::int AS due,
         count(*) FILTER (WHERE status = 'Pending' AND scheduled_at IS NOT NULL)::int AS deferred,
         count(*) FILTER (WHERE status = 'Failed' AND next_attempt_at IS NULL)::int AS terminal,
         count(*) FILTER (WHERE claim_token IS NOT NULL AND claim_expires_at > now())::int AS live_claims
    FROM notifications
   WHERE status <> 'Sent'
   GROUP BY channel
   ORDER BY channel`;
