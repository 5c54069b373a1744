import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { SqlExecutor } from '../persistence/sql-executor';
import {
  NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
  NOTIFICATION_DISPATCHED_TOPIC,
  type NotificationDispatchedEvent,
  type NotificationDispatchedHeaders,
} from './notification-dispatched-event';
import type { OutboxRow } from './outbox-row';

/**
 * Builds `notification_outbox` rows and appends them inside the caller's
 * transaction. With the default lock the cycle inserts the row in the same
 * statement as the status change (`NotificationRepository.applyTransitionFenced`);
 * `append` is the separate INSERT for locks without an SQL fence.
 */
@Injectable()
export class OutboxWriter {
  dispatchedRow(
    event: NotificationDispatchedEvent,
    headers: NotificationDispatchedHeaders,
  ): OutboxRow {
    return {
      id: randomUUID(),
      topic: NOTIFICATION_DISPATCHED_TOPIC,
      messageKey: event.notificationId,
      contractVersion: NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
      payload: JSON.stringify(event),
      headers: JSON.stringify(headers),
    };
  }

  async append(executor: SqlExecutor, row: OutboxRow): Promise<void> {
    // Plain SQL: the entity's jsonb typing cannot express a payload with nulls.
    await executor.query(
      `INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)`,
      [row.id, row.topic, row.messageKey, row.contractVersion, row.payload, row.headers],
    );
  }
}
