import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  NOTIFICATION_DISPATCHED_TOPIC,
  OutboxPublisher,
  type OutboxEvent,
  type OutboxPublishContext,
  type OutboxPublishOutcome,
} from '@pin/notifications-retry';

export interface OutboxEventFixture {
  id?: string;
  key: string;
  createdAt?: Date;
  publishedAt?: Date | null;
  parkedAt?: Date | null;
  /** Characters of padding in the payload, for the too-large case. */
  padding?: number;
  /** The payload's `sequence`: 1 by default, as the cycle writes a first event; null leaves it out. */
  sequence?: unknown;
}

/** Inserts outbox rows as the cycle writes them (a dispatched event, its headers); returns their ids in order. */
export async function insertOutboxEvents(
  dataSource: DataSource,
  events: readonly OutboxEventFixture[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const event of events) {
    const id = event.id ?? randomUUID();
    ids.push(id);
    await dataSource.query(
      `INSERT INTO notification_outbox
         (id, topic, message_key, contract_version, payload, headers, created_at, published_at, parked_at)
       VALUES ($1, $2, $3, 1, $4::jsonb, $5::jsonb, coalesce($6, now()), $7, $8)`,
      [
        id,
        NOTIFICATION_DISPATCHED_TOPIC,
        event.key,
        JSON.stringify({
          notificationId: event.key,
          tenantId: null,
          channel: 'email',
          status: 'Sent',
          attempts: 1,
          providerKey: 'scripted',
          providerMessageId: `scripted-${event.key}`,
          errorCode: null,
          occurredAt: new Date().toISOString(),
          ...(event.sequence === null ? {} : { sequence: event.sequence ?? 1 }),
          ...(event.padding ? { padding: 'x'.repeat(event.padding) } : {}),
        }),
        JSON.stringify({
          correlationId: `corr-${id.slice(0, 8)}`,
          jobRunId: 'run-1',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        }),
        event.createdAt ?? null,
        event.publishedAt ?? null,
        event.parkedAt ?? null,
      ],
    );
  }
  return ids;
}

export interface StoredOutboxRow {
  id: string;
  message_key: string;
  created_at: Date;
  published_at: Date | null;
  parked_at: Date | null;
  attempts: number;
  next_attempt_at: Date | null;
  claim_token: string | null;
  last_error: string | null;
}

export function outboxRows(dataSource: DataSource): Promise<StoredOutboxRow[]> {
  return dataSource.query(
    `SELECT id, message_key, created_at, published_at, parked_at, attempts, next_attempt_at,
            claim_token, last_error
       FROM notification_outbox ORDER BY created_at, id`,
  );
}

/**
 * Wraps a real publisher: records every batch it is handed and lets a test
 * decide an event's outcome itself (`decide` returning null passes it on).
 */
export class RecordingOutboxPublisher extends OutboxPublisher {
  readonly batches: OutboxEvent[][] = [];
  decide: (event: OutboxEvent) => OutboxPublishOutcome | null = () => null;

  constructor(private readonly inner: OutboxPublisher) {
    super();
  }

  get publishedIds(): string[] {
    return this.batches.flat().map((event) => event.id);
  }

  async publish(
    events: readonly OutboxEvent[],
    context: OutboxPublishContext,
  ): Promise<readonly OutboxPublishOutcome[]> {
    this.batches.push([...events]);
    const decided: OutboxPublishOutcome[] = [];
    const passed: OutboxEvent[] = [];
    for (const event of events) {
      const outcome = this.decide(event);
      if (outcome) decided.push(outcome);
      else passed.push(event);
    }
    const published = passed.length > 0 ? await this.inner.publish(passed, context) : [];
    return [...decided, ...published];
  }
}

/** Polls `check` until it returns true, or fails with `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not within ${timeoutMs} ms: ${what}`);
}
