import { randomUUID } from 'node:crypto';
import type { ClientBase } from 'pg';
import { NOTIFICATION_DISPATCHED_TOPIC } from '../../libs/notifications-retry/src';
import { BENCH_PROVIDER_KEY } from './bench-database';

/**
 * The columns the library sets for a Sent outcome, the event's sequence among them; scheduled_at
 * is kept, as the library keeps it.
 */
export const MARK_SENT = `UPDATE notifications
     SET status = 'Sent', attempts = attempts + 1, next_attempt_at = NULL,
         provider_message_id = $2, sent_at = $3, last_error_code = NULL, last_error_message = NULL,
         event_sequence = event_sequence + 1, updated_at = now()
   WHERE id = $1 AND status IN ('Pending', 'Failed')
  RETURNING id, tenant_id, channel, attempts, event_sequence`;

/**
 * A row's outcome and its outbox event in one statement, in autocommit: one
 * round trip and one commit per row, the least a per-row transaction costs.
 * The event is the library's (`appendSentEvent` builds the same one).
 */
const WRITE_SENT = `WITH updated AS (${MARK_SENT})
  INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
  SELECT $4::uuid, $5, u.id::text, 1,
         jsonb_build_object('notificationId', u.id, 'tenantId', u.tenant_id, 'channel', u.channel,
                            'status', 'Sent', 'attempts', u.attempts, 'providerKey', $6::text,
                            'providerMessageId', $2::text, 'errorCode', NULL,
                            'occurredAt', $7::text, 'sequence', u.event_sequence),
         jsonb_build_object('correlationId', $8::text, 'jobRunId', $8::text)
    FROM updated AS u`;

const RUN_ID = randomUUID();

/** The write limit's unit of work: the row Sent with its event, by id; false if it was not due. */
export async function writeSent(
  client: ClientBase,
  id: string,
  providerMessageId: string,
): Promise<boolean> {
  const sentAt = new Date();
  const { rowCount } = await client.query(WRITE_SENT, [
    id,
    providerMessageId,
    sentAt,
    randomUUID(),
    NOTIFICATION_DISPATCHED_TOPIC,
    BENCH_PROVIDER_KEY,
    sentAt.toISOString(),
    RUN_ID,
  ]);
  return rowCount === 1;
}
