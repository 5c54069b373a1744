/**
 * One `notification_outbox` row as the relay hands it to an `OutboxPublisher`.
 * The payload is the stored JSON text, so a publisher sends the bytes the
 * writer committed without parsing them.
 */
export interface OutboxEvent {
  /** The event id: the dedup key a broker should use (JetStream's Nats-Msg-Id, a Kafka header, ...). */
  readonly id: string;
  /** e.g. `pin.notifications.dispatched.v1`. */
  readonly topic: string;
  /** The NotificationId: events of one key are published one at a time, in `createdAt` order. */
  readonly messageKey: string;
  readonly contractVersion: number;
  /**
   * The payload's `sequence` (NotificationDispatchedEvent.sequence), read by
   * the relay's claim so that a publisher can hand it to the broker without
   * parsing the payload (the NATS publisher sends it as `Pin-Sequence`).
   * Null when the payload has no integer `sequence`: an event written before
   * the field existed, or a host's own event without one.
   */
  readonly sequence: number | null;
  /** The payload as JSON text (NotificationDispatchedEvent for the dispatched topic; no personal data). */
  readonly payload: string;
  /** The outbox headers (correlationId, jobRunId, traceparent), values as strings. */
  readonly headers: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  /** 1 on the first publish of this event, counting claims that never finished (a relay that died). */
  readonly attempt: number;
}
