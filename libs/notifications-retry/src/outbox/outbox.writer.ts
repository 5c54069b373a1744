import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
  NOTIFICATION_DISPATCHED_TOPIC,
  type NotificationDispatchedHeaders,
  type UnsequencedDispatchedEvent,
} from './notification-dispatched-event';
import type { OutboxRow } from './outbox-row';

/**
 * Builds `notification_outbox` rows. The cycle inserts each in the same
 * statement as its row's outcome (`settle-rows.sql`): the event and the status
 * change commit together or not at all. That statement adds the payload's
 * `sequence` (see UnsequencedDispatchedEvent).
 */
@Injectable()
export class OutboxWriter {
  dispatchedRow(
    event: UnsequencedDispatchedEvent,
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
}
