/**
 * What a redrive with this filter would take, by channel × error code: rows it
 * may reset, and rows it leaves because a worker holds a live claim on them.
 * $1 channel, $2 error code, $3 failed since, $4 ids (uuid[]); null = any.
 */
export const REDRIVE_PREVIEW_SQL = `
  SELECT channel, last_error_code AS error_code,
         count(*) FILTER (WHERE NOT (claim_token IS NOT NULL AND claim_expires_at > now()))::int AS eligible,
         count(*) FILTER (WHERE claim_token IS NOT NULL AND claim_expires_at > now())::int AS claimed
    FROM notifications
   WHERE status = 'Failed' AND next_attempt_at IS NULL
     AND ($1::text IS NULL OR channel = $1)
     AND ($2::text IS NULL OR last_error_code = $2)
     AND ($3::timestamptz IS NULL OR updated_at >= $3)
     AND ($4::uuid[] IS NULL OR id = ANY($4))
   GROUP BY channel, last_error_code
   ORDER BY channel, error_code NULLS FIRST`;
