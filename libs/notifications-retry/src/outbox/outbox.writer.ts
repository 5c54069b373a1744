import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
  NOTIFICATION_DISPATCHED_TOPIC,
  type NotificationDispatchedEvent,
  type NotificationDispatchedHeaders,
} from './notification-dispatched-event';

/** Appends events to `notification_outbox` inside the caller's transaction. */
@Injectable()
export class OutboxWriter {
  async appendDispatched(
    manager: EntityManager,
    event: NotificationDispatchedEvent,
    headers: NotificationDispatchedHeaders,
  ): Promise<void> {
    // Plain SQL: the entity's jsonb typing cannot express a payload with nulls.
    await manager.query(
      `INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)`,
      [
        randomUUID(),
        NOTIFICATION_DISPATCHED_TOPIC,
        event.notificationId,
        NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
        JSON.stringify(event),
        JSON.stringify(headers),
      ],
    );
  }
}
