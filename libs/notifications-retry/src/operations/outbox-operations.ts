import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OperationRefusedError } from '../errors/operation-refused.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { decodeCursor, nextCursor } from './keyset-cursor';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { validatePageLimit } from './page-limit';
import { requiredChoice, requiredUuid } from './query-values';
import { compileListParkedOutboxEvents } from './sql/list-parked-outbox-events.sql';
import { compileListUnpublishedOutboxEvents } from './sql/list-unpublished-outbox-events.sql';
import { compileOutboxStateCounts } from './sql/outbox-state-counts.sql';
import { compileRequeueOutboxEvent } from './sql/requeue-outbox-event.sql';

export const OUTBOX_LIST_STATES = ['unpublished', 'parked'] as const;
export type OutboxListState = (typeof OUTBOX_LIST_STATES)[number];

export interface OutboxListQuery {
  readonly state: OutboxListState;
  readonly after?: string;
  /** 1..200, default 50. */
  readonly limit?: number;
}

/** One outbox event as the console shows it: ids and status, never the payload. */
export interface OutboxEventSummary {
  readonly id: string;
  /** The NotificationId. */
  readonly messageKey: string;
  readonly topic: string;
  readonly createdAt: Date;
  readonly attempts: number;
  /** The publisher's reason for the last failure (a broker's code, never the payload). */
  readonly lastError: string | null;
  readonly parkedAt: Date | null;
  /** The payload's `sequence`, null when it has none. */
  readonly sequence: number | null;
}

export interface OutboxPage {
  readonly rows: OutboxEventSummary[];
  readonly next: string | null;
}

export interface OutboxStateCounts {
  readonly unpublished: number;
  readonly parked: number;
  /** How long the oldest unpublished (not parked) event has waited; null when none waits. */
  readonly oldestUnpublishedAgeMs: number | null;
}

export const DEFAULT_OUTBOX_LIST_LIMIT = 50;
export const MAX_OUTBOX_LIST_LIMIT = 200;

interface ListRow {
  id: string;
  messageKey: string;
  topic: string;
  createdAt: Date;
  attempts: number;
  lastError: string | null;
  parkedAt: Date | null;
  sequence: string | null;
  keyAt: string;
  keyId: string;
}

/** The console's outbox: what waits, what is parked, and putting a parked event back (audited). */
@Injectable()
export class OutboxOperations {
  private readonly lists: {
    readonly unpublished: ReturnType<typeof compileListUnpublishedOutboxEvents>;
    readonly parked: ReturnType<typeof compileListParkedOutboxEvents>;
  };
  private readonly countsStatement: ReturnType<typeof compileOutboxStateCounts>;
  private readonly requeueStatement: ReturnType<typeof compileRequeueOutboxEvent>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.lists = {
      unpublished: compileListUnpublishedOutboxEvents(dataSource),
      parked: compileListParkedOutboxEvents(dataSource),
    };
    this.countsStatement = compileOutboxStateCounts(dataSource);
    this.requeueStatement = compileRequeueOutboxEvent(dataSource);
  }

  async list(query: OutboxListQuery): Promise<OutboxPage> {
    const state = requiredChoice('state', query?.state, OUTBOX_LIST_STATES);
    const scope = `outbox-${state}`;
    const limit = validatePageLimit(query.limit, {
      default: DEFAULT_OUTBOX_LIST_LIMIT,
      max: MAX_OUTBOX_LIST_LIMIT,
    });
    const after = decodeCursor(scope, query.after);
    const statement = this.lists[state];
    const rows = await this.sql.run<ListRow>(
      statement,
      statement.values({ afterAt: after?.at ?? null, afterId: after?.id ?? null, limit }),
    );
    return {
      rows: rows.map((row) => ({
        id: row.id,
        messageKey: row.messageKey,
        topic: row.topic,
        createdAt: row.createdAt,
        attempts: row.attempts,
        lastError: row.lastError,
        parkedAt: row.parkedAt,
        sequence: sequenceOf(row.sequence),
      })),
      next: nextCursor(scope, rows, limit),
    };
  }

  async counts(): Promise<OutboxStateCounts> {
    const [row] = await this.sql.run<{
      unpublished: number;
      parked: number;
      oldestUnpublishedAgeMs: string | null;
    }>(this.countsStatement, []);
    return {
      unpublished: row?.unpublished ?? 0,
      parked: row?.parked ?? 0,
      oldestUnpublishedAgeMs:
        row?.oldestUnpublishedAgeMs == null
          ? null
          : Math.max(0, Number(row.oldestUnpublishedAgeMs)),
    };
  }

  /** A parked event published again by the next relay pass; refused unless it is parked. */
  async requeue(eventId: string, operator: OperatorContext): Promise<{ actionId: string }> {
    const id = requiredUuid('eventId', eventId);
    const who = validateOperatorContext(operator ?? { actor: '', reason: '' });
    const [row] = await this.sql.run<{ actionId: string }>(
      this.requeueStatement,
      this.requeueStatement.values({ eventId: id, actor: who.actor, reason: who.reason }),
    );
    if (!row) {
      throw new OperationRefusedError(
        'outbox-requeue',
        `event ${id} is not parked (unknown, waiting for the relay or already published)`,
      );
    }
    return { actionId: row.actionId };
  }
}

function sequenceOf(text: string | null): number | null {
  if (text === null) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}
