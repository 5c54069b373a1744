/**
 * Pauses a channel and audits it in one statement; a channel already paused
 * keeps its first pause (no row returned, nothing audited).
 * $1 channel, $2 reason, $3 actor.
 */
export const PAUSE_CHANNEL_SQL = `
  WITH paused AS (
    INSERT INTO notification_channel_pauses (channel, reason, paused_by)
    VALUES ($1::text, $2::text, $3::text)
    ON CONFLICT (channel) DO NOTHING
    RETURNING channel, reason, paused_by, paused_at
  ),
  audit AS (
    INSERT INTO notification_operator_actions (action, actor, reason, filter, rows)
    SELECT 'channel-pause', $3::text, $2::text, jsonb_build_object('channel', channel), 0 FROM paused
  )
  SELECT channel, reason, paused_by, paused_at FROM paused`;
