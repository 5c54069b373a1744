import type { LeaseFence } from '@pin/notifications-retry';

/** The fence of a test lock that never loses its lease: always one row, expiring never. */
export const OPEN_FENCE: LeaseFence = {
  sql: `SELECT 'infinity'::timestamptz AS expires_at`,
  params: () => [],
};
