import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import type { SqlStatement } from '../persistence/sql/sql-statement';
import type { OutboxEvent } from './outbox-event';
import { compileBackOffOutboxEvents } from './sql/back-off-outbox-events.sql';
import { compileClaimOutboxEvents } from './sql/claim-outbox-events.sql';
import { compileDeletePublishedOutboxEvents } from './sql/delete-published-outbox-events.sql';
import { compileMarkOutboxPublished } from './sql/mark-outbox-published.sql';
import { compileOutboxBacklog } from './sql/outbox-backlog.sql';
import { compileParkOutboxEvents } from './sql/park-outbox-events.sql';
import { compileReleaseOutboxEvents } from './sql/release-outbox-events.sql';

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
  messageKey: string;
  contractVersion: number;
  payload: string;
  /** The payload's sequence as text when it is a JSON number, else null. */
  sequence: string | null;
  headers: Record<string, unknown> | null;
  createdAt: Date;
  attempts: number;
}

/** Longest error text kept on a row. */
const MAX_ERROR_LENGTH = 500;

/**
 * The relay's statements on `notification_outbox` (compiled from the entity,
 * one file each in `sql/`). Each is one autocommitted statement: no
 * transaction is open while a broker is called, so a slow or unreachable
 * broker holds no connection and no row lock.
 */
@Injectable()
export class OutboxRelayRepository {
  private readonly statements: {
    readonly claim: ReturnType<typeof compileClaimOutboxEvents>;
    readonly markPublished: ReturnType<typeof compileMarkOutboxPublished>;
    readonly backOff: ReturnType<typeof compileBackOffOutboxEvents>;
    readonly park: ReturnType<typeof compileParkOutboxEvents>;
    readonly release: ReturnType<typeof compileReleaseOutboxEvents>;
    readonly backlog: ReturnType<typeof compileOutboxBacklog>;
    readonly deletePublished: ReturnType<typeof compileDeletePublishedOutboxEvents>;
  };

  // Through the library's SqlRunner, not TypeORM's query(): a client whose backend was terminated
  // is destroyed rather than handed to the next statement (DESIGN §3.5). Sent unnamed, as before
  // (SqlRunner.query): their row counts are what most of them answer.
  constructor(
    private readonly sql: SqlRunner,
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
  ) {
    this.statements = {
      claim: compileClaimOutboxEvents(dataSource),
      markPublished: compileMarkOutboxPublished(dataSource),
      backOff: compileBackOffOutboxEvents(dataSource),
      park: compileParkOutboxEvents(dataSource),
      release: compileReleaseOutboxEvents(dataSource),
      backlog: compileOutboxBacklog(dataSource),
      deletePublished: compileDeletePublishedOutboxEvents(dataSource),
    };
  }

  /**
   * Claims up to `limit` events, oldest first, stamping `token` on them. Only
   * the oldest unpublished, unparked event of each message key can be
   * claimed, so a key never has two events in flight and its events go out
   * in `created_at` order; a key whose head is backing off waits, the others
   * do not. SKIP LOCKED lets several relays claim side by side; PostgreSQL
   * re-checks the claim condition on a row another relay changed meanwhile.
   */
  async claim(token: string, limit: number, claimTtlMs: number): Promise<OutboxEvent[]> {
    const { claim } = this.statements;
    const { rows } = await this.sql.query<ClaimedRow>(
      claim.text,
      claim.values({ limit, claimToken: token, claimTtlMs }),
    );
    return rows
      .map((row): OutboxEvent => ({
        id: row.id,
        topic: row.topic,
        messageKey: row.messageKey,
        contractVersion: row.contractVersion,
        sequence: eventSequence(row.sequence),
        payload: row.payload,
        headers: stringHeaders(row.headers),
        createdAt: row.createdAt,
        attempt: row.attempts,
      }))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  /** Sets `published_at` on the rows still claimed by `token`; returns how many were. */
  async markPublished(token: string, eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const { markPublished } = this.statements;
    return this.affected(
      markPublished,
      markPublished.values({ ids: [...eventIds], claimToken: token }),
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
    const { backOff } = this.statements;
    return this.affected(
      backOff,
      backOff.values({
        ids: ids(failures),
        errors: errors(failures),
        baseMs,
        maxMs,
        claimToken: token,
      }),
    );
  }

  /** Permanent failures: parked with their reason; their keys' later events go on. */
  async park(token: string, failures: readonly OutboxFailure[]): Promise<number> {
    if (failures.length === 0) return 0;
    const { park } = this.statements;
    return this.affected(
      park,
      park.values({ ids: ids(failures), errors: errors(failures), claimToken: token }),
    );
  }

  /** Cut by shutdown: released at once for another relay, with no backoff. */
  async release(token: string, eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const { release } = this.statements;
    return this.affected(release, release.values({ ids: [...eventIds], claimToken: token }));
  }

  async backlog(): Promise<OutboxBacklog> {
    const { backlog } = this.statements;
    const {
      rows: [row],
    } = await this.sql.query<{ unpublished: number; oldest: number; parked: number }>(
      backlog.text,
      backlog.values({}),
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
    const { deletePublished } = this.statements;
    return this.affected(deletePublished, deletePublished.values({ retentionMs, limit }));
  }

  private async affected(statement: SqlStatement, values: unknown[]): Promise<number> {
    return (await this.sql.query(statement.text, values)).rowCount;
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
