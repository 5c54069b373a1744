import { randomUUID } from 'node:crypto';
import type { ClientBase } from 'pg';
import { NOTIFICATION_DISPATCHED_TOPIC } from '../../libs/notifications-retry/src';
import { BENCH_CHANNEL, BENCH_PROVIDER_KEY } from './bench-database';
import { fakeProvider } from './fake-provider';

/**
 * The per-row unit of work written by hand through `pg`, as the physical limit
 * and as the job body of pg-boss and graphile-worker: the same columns the
 * library writes, the same outbox event, one transaction per row.
 */

interface LockedRow {
  id: string;
  tenant_id: string | null;
  channel: string;
  attempts: number;
}

const COLUMNS = 'id, tenant_id, channel, recipient_address, subject, body, status, attempts';

/** The oldest due row nobody holds, on `notifications_due_idx`. */
const CLAIM_NEXT = `SELECT ${COLUMNS} FROM notifications
  WHERE channel = $1 AND due_at <= $2
  ORDER BY due_at LIMIT 1
  FOR UPDATE SKIP LOCKED`;

/** A job's row by id, if still due. */
const LOCK_BY_ID = `SELECT ${COLUMNS} FROM notifications
  WHERE id = $1 AND due_at <= $2
  FOR UPDATE`;

const MARK_SENT = `UPDATE notifications
  SET status = 'Sent', attempts = $2, next_attempt_at = NULL, scheduled_at = NULL,
      provider_message_id = $3, sent_at = $4, last_error_code = NULL, last_error_message = NULL,
      updated_at = now()
  WHERE id = $1`;

const APPEND_OUTBOX = `INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
  VALUES ($1, $2, $3, 1, $4::jsonb, $5::jsonb)`;

const RUN_ID = randomUUID();

/**
 * BEGIN; claim the oldest due row with SKIP LOCKED; provider call; UPDATE;
 * INSERT outbox; COMMIT. False when nothing is due any more.
 */
export async function processNextDue(client: ClientBase): Promise<boolean> {
  return inTransaction(client, CLAIM_NEXT, [BENCH_CHANNEL, new Date()]);
}

/** The job body: BEGIN; lock the job's row; provider call; UPDATE; INSERT outbox; COMMIT. */
export async function processById(client: ClientBase, id: string): Promise<boolean> {
  return inTransaction(client, LOCK_BY_ID, [id, new Date()]);
}

async function inTransaction(
  client: ClientBase,
  lockSql: string,
  params: unknown[],
): Promise<boolean> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<LockedRow>(lockSql, params);
    const row = rows[0];
    if (!row) {
      await client.query('ROLLBACK');
      return false;
    }
    const providerMessageId = await fakeProvider.send(row.id);
    const sentAt = new Date();
    const attempts = row.attempts + 1;
    await client.query(MARK_SENT, [row.id, attempts, providerMessageId, sentAt]);
    await client.query(APPEND_OUTBOX, [
      randomUUID(),
      NOTIFICATION_DISPATCHED_TOPIC,
      row.id,
      JSON.stringify({
        notificationId: row.id,
        tenantId: row.tenant_id,
        channel: row.channel,
        status: 'Sent',
        attempts,
        providerKey: BENCH_PROVIDER_KEY,
        providerMessageId,
        errorCode: null,
        occurredAt: sentAt.toISOString(),
      }),
      JSON.stringify({ correlationId: RUN_ID, jobRunId: RUN_ID }),
    ]);
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
