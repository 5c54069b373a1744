export const NOTIFICATION_DISPATCHED_TOPIC = 'pin.notifications.dispatched.v1';
export const NOTIFICATION_DISPATCHED_CONTRACT_VERSION = 1;

/**
 * Payload of `pin.notifications.dispatched.v1`, emitted once per notification
 * when its outcome is final. Read by delivery analytics: no personal data.
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
}

/** Outbox headers: how the event is traced back to the cycle that produced it. */
export interface NotificationDispatchedHeaders {
  readonly correlationId: string;
  readonly jobRunId: string;
  readonly traceparent?: string;
}
