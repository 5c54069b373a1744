import type { OutboxEvent } from './outbox-event';
import type { OutboxPublishOutcome } from './outbox-publish-outcome';

export interface OutboxPublishContext {
  /**
   * Fires at the relay's publish timeout or when shutdown cuts the batch. An
   * answer after it is ignored: the events are published again later, with the
   * same ids, so the broker must deduplicate on `OutboxEvent.id`.
   */
  readonly signal: AbortSignal;
}

/**
 * Sends outbox events to a broker: the extension point behind the relay
 * (`extensions.outboxPublisher`). Built in: `NatsJetStreamOutboxPublisher`.
 *
 * `publish` gets a batch with at most one event per message key and returns an
 * outcome per event id; it resolves only once the broker has acknowledged what
 * it reports as published. An event left out of the result, and a thrown error
 * or rejection, count as retriable for the events concerned.
 */
export abstract class OutboxPublisher {
  abstract publish(
    events: readonly OutboxEvent[],
    context: OutboxPublishContext,
  ): Promise<readonly OutboxPublishOutcome[]>;
}
