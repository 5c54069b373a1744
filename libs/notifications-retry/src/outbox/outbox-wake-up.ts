import { Injectable } from '@nestjs/common';

/**
 * Tells this process's outbox relay that events were just committed, so it
 * publishes them now instead of at its next poll. Calls are coalesced; without
 * a listening relay they do nothing. Other instances find the rows by polling.
 */
@Injectable()
export class OutboxWakeUp {
  private readonly listeners = new Set<() => void>();

  /** Call after the commit of a transaction that wrote outbox rows. */
  eventsWritten(): void {
    for (const listener of this.listeners) listener();
  }

  /** Returns the unsubscribe function. */
  onEventsWritten(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
