import { Injectable } from '@nestjs/common';
import { SqlRunner } from '../persistence/sql-runner';
import { EVENT_SEQUENCE_FIELD } from '../persistence/sql/event-sequence.sql';
import type { OutboxEvent } from './outbox-event';

/** A retriable or permanent failure to write back, by event id. */
export interface OutboxFailure {
  readonly eventId: string;
  readonly error: string;
}

export interface OutboxBacklog {
  /** Unpublished rows that are not parked. */
  readonly unpublished: number;
  /** Age of the oldest of them by the database clock, 0 when there is none. */
  readonly oldestAgeSeconds: number;
  readonly parked: number;
}

interface ClaimedRow {
  id: string;
  topic: string;
  message_key: string;
  contract_version: number;
  payload: string;
  /** The payload's sequence as text when it is a JSON number, else null. */
  sequence: string | null;
  headers: Record<string, unknown> | null;
  created_at: Date;
  attempts: number;
}

/** Longest error text kept on a row. */
const MAX_ERROR_LENGTH = 500;

/**
 * The relay's statements on `notification_outbox`. Each is one autocommitted
 * statement: no transaction is open while a broker is called, so a slow or
 * unreachable broker holds no connection and no row lock.
 */
@Injectable()
export class OutboxRelayRepository {
  // Through the library's SqlRunner, not TypeORM's query(): a client whose backend was terminated
  // is destroyed rather than handed to the next statement (DESIGN §3.5).
  constructor(private readonly sql: SqlRunner) {}

  /**
   * Claims up to `limit` events, oldest first, stamping `token` on them. Only
   * the oldest unpublished, unparked event of each message key can be
   * claimed, so a key never has two events in flight and its events go out
   * in `created_at` order; a key whose head is backing off waits, the others
   * do not. SKIP LOCKED lets several relays claim side by side; PostgreSQL
   * re-checks the claim condition on a row another relay changed meanwhile.
   */
  async claim(token: string, limit: number, claimTtlMs: number): Promise<OutboxEvent[]> {
    const { rows } = await this.sql.query<ClaimedRow>(
      `WITH candidates AS (
         SELECT o.id
           FROM notification_outbox o
          WHERE o.published_at IS NULL
            AND o.parked_at IS NULL
            AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())
            AND (o.claim_expires_at IS NULL OR o.claim_expires_at <= now())
            AND NOT EXISTS (
                  SELECT 1 FROM notification_outbox older
                   WHERE older.message_key = o.message_key
                     AND older.published_at IS NULL
                     AND older.parked_at IS NULL
                     AND (older.created_at, older.id) < (o.created_at, o.id))
          ORDER BY o.created_at, o.id
          LIMIT $1
            FOR UPDATE SKIP LOCKED)
       UPDATE notification_outbox o
          SET claim_token = $2,
              claim_expires_at = now() + $3 * interval '1 millisecond',
              attempts = o.attempts + 1
         FROM candidates c
        WHERE o.id = c.id
       RETURNING o.id, o.topic, o.message_key, o.contract_version, o.payload::text AS payload,
                 CASE WHEN jsonb_typeof(o.payload -> '${EVENT_SEQUENCE_FIELD}') = 'number'
                      THEN o.payload ->> '${EVENT_SEQUENCE_FIELD}' END AS sequence,
                 o.headers, o.created_at, o.attempts`,
      [limit, token, claimTtlMs],
    );
    return rows
      .map((row): OutboxEvent => ({
        id: row.id,
        topic: row.topic,
        messageKey: row.message_key,
        contractVersion: row.contract_version,
        sequence: eventSequence(row.sequence),
        payload: row.payload,
        headers: stringHeaders(row.headers),
        createdAt: row.created_at,
        attempt: row.attempts,
      }))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  /** Sets `published_at` on the rows still claimed by `token`; returns how many were. */
  async markPublished(token: string, eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    return this.affected(
      `UPDATE notification_outbox
          SET published_at = now(), claim_token = NULL, claim_expires_at = NULL,
              next_attempt_at = NULL, last_error = NULL
        WHERE id = ANY($1::uuid[]) AND claim_token = $2`,
      [eventIds, token],
    );
  }

  /**
   * Retriable failures: released and held back by base × 2^(attempts − 1),
   * ±20 % jitter, at most `maxMs` (computed by the database, on its clock).
   */
  async backOff(
    token: string,
    failures: readonly OutboxFailure[],
    baseMs: number,
    maxMs: number,
  ): Promise<number> {
    if (failures.length === 0) return 0;
    return this.affected(
      `UPDATE notification_outbox o
          SET claim_token = NULL, claim_expires_at = NULL, last_error = f.error,
              next_attempt_at = now() + least($4::float8,
                $3::float8 * power(2, least(greatest(o.attempts - 1, 0), 30))
              ) * (0.8 + random() * 0.4) * interval '1 millisecond'
         FROM unnest($1::uuid[], $2::text[]) AS f(id, error)
        WHERE o.id = f.id AND o.claim_token = $5`,
      [ids(failures), errors(failures), baseMs, maxMs, token],
    );
  }

  /** Permanent failures: parked with their reason; their keys' later events go on. */
  async park(token: string, failures: readonly OutboxFailure[]): Promise<number> {
    if (failures.length === 0) return 0;
    return this.affected(
      `UPDATE notification_outbox o
          SET claim_token = NULL, claim_expires_at = NULL, parked_at = now(), last_error = f.error
         FROM unnest($1::uuid[], $2::text[]) AS f(id, error)
        WHERE o.id = f.id AND o.claim_token = $3`,
      [ids(failures), errors(failures), token],
    );
  }

  /** Cut by shutdown: released at once for another relay, with no backoff. */
  async release(token: string, eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    return this.affected(
      `UPDATE notification_outbox SET claim_token = NULL, claim_expires_at = NULL
        WHERE id = ANY($1::uuid[]) AND claim_token = $2`,
      [eventIds, token],
    );
  }

  async backlog(): Promise<OutboxBacklog> {
    const {
      rows: [row],
    } = await this.sql.query<{ unpublished: number; oldest: number; parked: number }>(
      `SELECT (SELECT count(*) FROM notification_outbox
                WHERE published_at IS NULL AND parked_at IS NULL)::int AS unpublished,
              coalesce(extract(epoch FROM now() - (
                SELECT min(created_at) FROM notification_outbox
                 WHERE published_at IS NULL AND parked_at IS NULL)), 0)::float8 AS oldest,
              (SELECT count(*) FROM notification_outbox
                WHERE parked_at IS NOT NULL AND published_at IS NULL)::int AS parked`,
    );
    return {
      unpublished: row.unpublished,
      oldestAgeSeconds: Math.max(0, row.oldest),
      parked: row.parked,
    };
  }

  /**
   * Deletes up to `limit` published rows older than `retentionMs`, oldest
   * first. Parked and unpublished rows have no `published_at` and are never
   * candidates. SKIP LOCKED: instances running retention together split the work.
   */
  async deletePublished(retentionMs: number, limit: number): Promise<number> {
    return this.affected(
      `DELETE FROM notification_outbox
        WHERE id IN (SELECT id FROM notification_outbox
                      WHERE published_at < now() - $1 * interval '1 millisecond'
                      ORDER BY published_at
                      LIMIT $2
                        FOR UPDATE SKIP LOCKED)`,
      [retentionMs, limit],
    );
  }

  private async affected(sql: string, parameters: unknown[]): Promise<number> {
    return (await this.sql.query(sql, parameters)).rowCount;
  }
}

function stringHeaders(headers: Record<string, unknown> | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (value === null || value === undefined) continue;
    out[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return out;
}

/**
 * Read as text and checked here: a host's own event with a fractional or huge
 * `sequence` must not fail the whole claim (a cast in SQL would), it just has none.
 */
function eventSequence(text: string | null): number | null {
  if (text === null) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

function ids(failures: readonly OutboxFailure[]): string[] {
  return failures.map((failure) => failure.eventId);
}

function errors(failures: readonly OutboxFailure[]): string[] {
  return failures.map((failure) => failure.error.slice(0, MAX_ERROR_LENGTH));
}
