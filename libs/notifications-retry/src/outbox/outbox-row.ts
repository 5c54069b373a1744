/**
 * An outbox row ready to insert, built before the row's write so the fused
 * statement can carry it: ids chosen, JSON already serialised.
 */
export interface OutboxRow {
  readonly id: string;
  readonly topic: string;
  readonly messageKey: string;
  readonly contractVersion: number;
  /** NotificationDispatchedEvent as JSON. */
  readonly payload: string;
  /** NotificationDispatchedHeaders as JSON. */
  readonly headers: string;
}
