import { randomUUID } from 'node:crypto';
import type { ClientBase } from 'pg';
import { NOTIFICATION_DISPATCHED_TOPIC } from '../../libs/notifications-retry/src';
import { BENCH_PROVIDER_KEY } from './bench-database';

/**
 * Many rows' outcomes and their outbox events in one autocommitted statement:
 * the columns `MARK_SENT` sets and the event `writeSent` appends, per row, for
 * every id of the batch (one commit, one WAL flush for all of them). The rows
 * are locked in due order, as a claim would take them; a row no longer
 * Pending or Failed is left out, and the caller sees it in the count.
 */
const WRITE_SENT_BATCH = `WITH picked AS (
    SELECT n.id, p.provider_message_id
      FROM unnest($1::uuid[], $2::text[]) AS p(id, provider_message_id)
      JOIN notifications AS n ON n.id = p.id
     WHERE n.status IN ('Pending', 'Failed')
     ORDER BY n.due_at
       FOR UPDATE OF n SKIP LOCKED
  ), updated AS (
    UPDATE notifications AS n
       SET status = 'Sent', attempts = n.attempts + 1, next_attempt_at = NULL,
           provider_message_id = picked.provider_message_id, sent_at = $3,
           last_error_code = NULL, last_error_message = NULL,
           event_sequence = n.event_sequence + 1, updated_at = now()
      FROM picked
     WHERE n.id = picked.id
    RETURNING n.id, n.tenant_id, n.channel, n.attempts, n.event_sequence, n.provider_message_id
  )
  INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
  SELECT gen_random_uuid(), $4, u.id::text, 1,
         jsonb_build_object('notificationId', u.id, 'tenantId', u.tenant_id, 'channel', u.channel,
                            'status', 'Sent', 'attempts', u.attempts, 'providerKey', $5::text,
                            'providerMessageId', u.provider_message_id, 'errorCode', NULL,
                            'occurredAt', $6::text, 'sequence', u.event_sequence),
         jsonb_build_object('correlationId', $7::text, 'jobRunId', $7::text)
    FROM updated AS u`;

const RUN_ID = randomUUID();

/** The set-based write limit's unit of work: every row of the batch Sent with its event; how many were. */
export async function writeSentBatch(
  client: ClientBase,
  ids: readonly string[],
  providerMessageIds: readonly string[],
): Promise<number> {
  const sentAt = new Date();
  const { rowCount } = await client.query(WRITE_SENT_BATCH, [
    ids,
    providerMessageIds,
    sentAt,
    NOTIFICATION_DISPATCHED_TOPIC,
    BENCH_PROVIDER_KEY,
    sentAt.toISOString(),
    RUN_ID,
  ]);
  return rowCount ?? 0;
}
