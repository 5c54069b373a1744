/**
 * Resumes a channel and audits it in one statement; a channel not paused
 * returns no row and nothing is audited. $1 channel, $2 reason, $3 actor.
 */
export const RESUME_CHANNEL_SQL = `
  WITH resumed AS (
    DELETE FROM notification_channel_pauses WHERE channel = $1::text
    RETURNING channel, reason, paused_by, paused_at
  ),
  audit AS (
    INSERT INTO notification_operator_actions (action, actor, reason, filter, rows)
    SELECT 'channel-resume', $3::text, $2::text,
           jsonb_build_object('channel', channel, 'pausedAt', paused_at, 'pauseReason', reason), 0
      FROM resumed
  )
  SELECT channel, reason, paused_by, paused_at FROM resumed`;
