import { randomUUID } from 'node:crypto';
import type { ClientBase } from 'pg';
import {
  NOTIFICATION_DISPATCHED_TOPIC,
  type NotificationDispatchedEvent,
  type NotificationDispatchedHeaders,
} from '../../libs/notifications-retry/src';
import { BENCH_PROVIDER_KEY } from './bench-database';

/** The outbox row our library writes for a Sent notification (contract version 1), by hand. */
const APPEND_OUTBOX = `INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
  VALUES ($1, $2, $3, 1, $4::jsonb, $5::jsonb)`;

/** What the event says about the row, as read back from the row's UPDATE. */
export interface SentRow {
  readonly id: string;
  readonly tenant_id: string | null;
  readonly channel: string;
  /** After the attempt: the row's new value. */
  readonly attempts: number;
  /** After the write: the event's number. */
  readonly event_sequence: number;
}

/**
 * Appends `pin.notifications.dispatched.v1` (status Sent) for the row, in the
 * caller's transaction: the same topic, key, payload fields and headers as the
 * library's outbox writer. `runId` stands where the library puts its cycle's
 * run and correlation ids (a peer's job id).
 */
export async function appendSentEvent(
  client: ClientBase,
  row: SentRow,
  providerMessageId: string,
  sentAt: Date,
  runId: string,
): Promise<void> {
  const event: NotificationDispatchedEvent = {
    notificationId: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    status: 'Sent',
    attempts: row.attempts,
    providerKey: BENCH_PROVIDER_KEY,
    providerMessageId,
    errorCode: null,
    occurredAt: sentAt.toISOString(),
    sequence: row.event_sequence,
  };
  const headers: NotificationDispatchedHeaders = { correlationId: runId, jobRunId: runId };
  await client.query(APPEND_OUTBOX, [
    randomUUID(),
    NOTIFICATION_DISPATCHED_TOPIC,
    row.id,
    JSON.stringify(event),
    JSON.stringify(headers),
  ]);
}
