import type { NotificationStatus } from '../notifications/notification-status';

/**
 * A row locked for its unit of work: the columns the cycle reads, read with
 * plain SQL. No `NotificationEntity` is hydrated on the hot path (TypeORM's
 * alias mapping and entity transformer cost more Node CPU per row than the
 * statement itself).
 */
export interface ClaimedNotification {
  readonly id: string;
  readonly tenantId: string | null;
  readonly channel: string;
  readonly recipientAddress: string;
  readonly subject: string | null;
  readonly body: string;
  readonly status: NotificationStatus;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly scheduledAt: Date | null;
}

/** The columns of `notifications` selected for a ClaimedNotification, in SQL order. */
export const CLAIMED_NOTIFICATION_COLUMNS = `id, tenant_id, channel, recipient_address, subject, body, status, attempts,
              next_attempt_at, scheduled_at`;

/** A row as `pg` returns CLAIMED_NOTIFICATION_COLUMNS (timestamptz parsed to Date, int4 to number). */
export interface ClaimedNotificationRow {
  readonly id: string;
  readonly tenant_id: string | null;
  readonly channel: string;
  readonly recipient_address: string;
  readonly subject: string | null;
  readonly body: string;
  readonly status: NotificationStatus;
  readonly attempts: number;
  readonly next_attempt_at: Date | null;
  readonly scheduled_at: Date | null;
}

export function toClaimedNotification(row: ClaimedNotificationRow): ClaimedNotification {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    recipientAddress: row.recipient_address,
    subject: row.subject,
    body: row.body,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    scheduledAt: row.scheduled_at,
  };
}
