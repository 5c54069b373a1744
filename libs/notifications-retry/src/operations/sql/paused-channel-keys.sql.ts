/** The keys of the paused channels: what the cycle leaves out of the claim. */
export const PAUSED_CHANNEL_KEYS_SQL = `SELECT channel FROM notification_channel_pauses`;
