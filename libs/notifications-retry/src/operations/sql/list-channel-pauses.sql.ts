/** Every paused channel, with how long it has been paused by the database clock. */
export const LIST_CHANNEL_PAUSES_SQL = `
  SELECT channel, reason, paused_by, paused_at,
         (extract(epoch FROM now() - paused_at) * 1000)::bigint AS paused_for_ms
    FROM notification_channel_pauses
   ORDER BY channel`;
