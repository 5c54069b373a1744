/**
 * The payload field of an outbox event that carries its notification's
 * `event_sequence` (NotificationDispatchedEvent.sequence). Consumers keep the
 * latest event of a notification by it: after a redrive or a late success
 * more than one final event exists, and `created_at` order is only the
 * relay's, not the broker's or a consumer's.
 */
export const EVENT_SEQUENCE_FIELD = 'sequence';

/**
 * `payload` (jsonb) with the sequence the same statement gave the event.
 * Set by the statement, never by the caller: only the UPDATE that increments
 * `event_sequence` knows the value, under the row lock it holds.
 */
export function withEventSequence(payloadSql: string, sequenceSql: string): string {
  return `(${payloadSql}) || jsonb_build_object('${EVENT_SEQUENCE_FIELD}', ${sequenceSql})`;
}
