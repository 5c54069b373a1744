export const NOTIFICATION_DISPATCHED_TOPIC = 'pin.notifications.dispatched.v1';
export const NOTIFICATION_DISPATCHED_CONTRACT_VERSION = 1;

/**
 * Payload of `pin.notifications.dispatched.v1`, emitted when a notification's
 * outcome is final: once per delivery episode (a redrive opens another), and
 * once more when a success answered late follows a terminal Failed. Read by
 * delivery analytics: no personal data.
 */
export interface NotificationDispatchedEvent {
  readonly notificationId: string;
  readonly tenantId: string | null;
  readonly channel: string;
  readonly status: 'Sent' | 'Failed';
  readonly attempts: number;
  readonly providerKey: string | null;
  readonly providerMessageId: string | null;
  readonly errorCode: string | null;
  readonly occurredAt: string;
  /**
   * The notification's event number, from 1, strictly increasing over its
   * whole life (`notifications.event_sequence`): a consumer keeps the event
   * with the highest sequence per notificationId, whatever order they arrive
   * in. Added in contract version 1 (an added field); absent on events
   * written before it.
   */
  readonly sequence: number;
}

/**
 * The event as the worker builds it before the write: the statement that
 * writes it gives it its `sequence`, since only that statement holds the
 * notification's row and its current event_sequence.
 */
export type UnsequencedDispatchedEvent = Omit<NotificationDispatchedEvent, 'sequence'>;

/** Outbox headers: how the event is traced back to the cycle that produced it. */
export interface NotificationDispatchedHeaders {
  readonly correlationId: string;
  readonly jobRunId: string;
  readonly traceparent?: string;
}
