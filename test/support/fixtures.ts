import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

export interface ChannelFixture {
  key: string;
  isEnabled?: boolean;
  providerKey?: string | null;
  maxAttempts?: number | null;
  backoffKind?: string | null;
  backoffBaseMs?: number | null;
  backoffMaxMs?: number | null;
  backoffMultiplier?: number | null;
  backoffJitter?: boolean;
  timeoutMs?: number | null;
  rateLimitPerSec?: number | null;
  maxConcurrency?: number | null;
}

export async function insertChannel(
  dataSource: DataSource,
  channel: ChannelFixture,
): Promise<void> {
  await dataSource.query(
    `INSERT INTO notification_channels
       (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms, backoff_max_ms,
        backoff_multiplier, timeout_ms, rate_limit_per_sec, max_concurrency, backoff_jitter)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      channel.key,
      channel.isEnabled ?? true,
      channel.providerKey === undefined ? 'scripted' : channel.providerKey,
      channel.maxAttempts === undefined ? 3 : channel.maxAttempts,
      channel.backoffKind === undefined ? 'Exponential' : channel.backoffKind,
      channel.backoffBaseMs === undefined ? 60_000 : channel.backoffBaseMs,
      channel.backoffMaxMs === undefined ? 3_600_000 : channel.backoffMaxMs,
      channel.backoffMultiplier === undefined ? 2 : channel.backoffMultiplier,
      channel.timeoutMs === undefined ? 2_000 : channel.timeoutMs,
      channel.rateLimitPerSec ?? null,
      channel.maxConcurrency ?? null,
      channel.backoffJitter ?? true,
    ],
  );
}

export interface NotificationFixture {
  id?: string;
  tenantId?: string | null;
  channel?: string;
  recipientAddress?: string;
  subject?: string | null;
  body?: string;
  status: 'Pending' | 'Sent' | 'Failed';
  attempts?: number;
  nextAttemptAt?: Date | null;
  scheduledAt?: Date | null;
  providerMessageId?: string | null;
  sentAt?: Date | null;
}

export async function insertNotification(
  dataSource: DataSource,
  row: NotificationFixture,
): Promise<string> {
  const id = row.id ?? randomUUID();
  await dataSource.query(
    `INSERT INTO notifications
       (id, tenant_id, channel, recipient_address, subject, body, status, attempts,
        next_attempt_at, scheduled_at, provider_message_id, sent_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      id,
      row.tenantId ?? null,
      row.channel ?? 'email',
      row.recipientAddress ?? `person-${id.slice(0, 8)}@example.com`,
      row.subject === undefined ? 'Your statement is ready' : row.subject,
      row.body ?? `Hello ${id.slice(0, 8)}, your statement is ready.`,
      row.status,
      row.attempts ?? 0,
      row.nextAttemptAt ?? null,
      row.scheduledAt ?? null,
      row.providerMessageId ?? null,
      row.sentAt ?? null,
    ],
  );
  return id;
}

export interface StoredNotification {
  id: string;
  channel: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  scheduled_at: Date | null;
  provider_message_id: string | null;
  last_error_code: string | null;
  last_error_message: string | null;
  sent_at: Date | null;
  updated_at: Date;
  claim_token: string | null;
  claim_expires_at: Date | null;
  due_at: Date | null;
}

export async function readNotification(
  dataSource: DataSource,
  id: string,
): Promise<StoredNotification> {
  const rows: StoredNotification[] = await dataSource.query(
    `SELECT * FROM notifications WHERE id = $1`,
    [id],
  );
  if (!rows[0]) throw new Error(`notification ${id} not found`);
  return rows[0];
}

export interface StoredOutboxEvent {
  id: string;
  topic: string;
  message_key: string;
  contract_version: number;
  payload: Record<string, unknown>;
  headers: Record<string, string>;
  published_at: Date | null;
}

export function outboxEvents(
  dataSource: DataSource,
  notificationId?: string,
): Promise<StoredOutboxEvent[]> {
  return notificationId
    ? dataSource.query(
        `SELECT * FROM notification_outbox WHERE message_key = $1 ORDER BY created_at`,
        [notificationId],
      )
    : dataSource.query(`SELECT * FROM notification_outbox ORDER BY created_at`);
}

export const minutesAgo = (base: Date, minutes: number): Date =>
  new Date(base.getTime() - minutes * 60_000);
export const minutesLater = (base: Date, minutes: number): Date =>
  new Date(base.getTime() + minutes * 60_000);

/** Empties every table of the data contract between tests that share a database. */
/** The row's event counter (`event_sequence`), which StoredNotification does not list. */
export async function eventSequence(dataSource: DataSource, id: string): Promise<number> {
  const rows = await dataSource.query<Array<{ event_sequence: number }>>(
    `SELECT event_sequence FROM notifications WHERE id = $1`,
    [id],
  );
  return rows[0].event_sequence;
}

export async function resetTables(dataSource: DataSource): Promise<void> {
  await dataSource.query(
    'TRUNCATE notifications, notification_channels, notification_outbox, distributed_locks, notification_channel_pauses, notification_redriven_rows, notification_operator_action_rows, notification_operator_actions, notification_retry_cycles',
  );
}
