import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RowTransition } from '../cycle/row-transition';
import type { SqlFence } from '../locking/sql-fence';
import type { OutboxRow } from '../outbox/outbox-row';
import {
  CLAIMED_NOTIFICATION_COLUMNS,
  toClaimedNotification,
  type ClaimedNotification,
  type ClaimedNotificationRow,
} from './claimed-notification';
import type { SqlExecutor } from './sql-executor';
import { InjectNotificationsRetryDataSource } from './notifications-retry-data-source';

/** A due row found by the candidate scan; not locked yet. */
export interface DueCandidate {
  readonly id: string;
  readonly channel: string;
  readonly dueAt: Date;
}

/** How many candidates a channel may contribute to one cycle. */
export interface ChannelQuota {
  readonly channel: string;
  readonly quota: number;
}

/** Due rows of a channel the cycle leaves alone, for the channel-disabled count. */
export interface ExcludedDueCount {
  readonly channel: string;
  readonly due: number;
}

/** Failed rows awaiting a retry (due or not) of one channel: the backlog gauge. */
export interface FailedBacklogCount {
  readonly channel: string;
  readonly rows: number;
}

/** What a cycle reads before it sends anything (`cycleSnapshot`). */
export interface CycleSnapshot {
  /** As `findDueCandidates` returns them, oldest due first. */
  readonly candidates: DueCandidate[];
  /** Due rows of every channel outside the cycle's, by channel: counted, never touched. */
  readonly excludedDue: ExcludedDueCount[];
  /** As `countFailedBacklog` returns them, by channel. */
  readonly failedBacklog: FailedBacklogCount[];
}

/**
 * The candidate scan: one range scan of `notifications_due_idx` per channel,
 * merged by due time. $1 channel keys, $2 their quotas, $3 now, $4 limit, $5
 * ids to leave out (an empty array for none; one SQL text either way).
 */
const CANDIDATE_SCAN = `SELECT c.id, c.channel, c.due_at
         FROM unnest($1::text[], $2::int[]) AS ch(key, quota)
         CROSS JOIN LATERAL (
           SELECT n.id, n.channel, n.due_at
             FROM notifications n
            WHERE n.channel = ch.key AND n.due_at <= $3 AND NOT (n.id = ANY($5::uuid[]))
            ORDER BY n.due_at
            LIMIT ch.quota
         ) AS c
        ORDER BY c.due_at
        LIMIT $4`;

/** The columns a RowTransition sets; $1 is the row's id (see `transitionParams`). */
const SET_TRANSITION = `status = $2, attempts = $3, next_attempt_at = $4, scheduled_at = $5,
         provider_message_id = $6, sent_at = $7, last_error_code = $8, last_error_message = $9,
         updated_at = now()`;
const TRANSITION_PARAMS = 9;

/**
 * SQL for `notifications`, nothing else: what to do with rows is decided in the
 * cycle. Every value reaches SQL as a parameter. The per-row statements
 * (`lockIfDue`, `applyTransitionFenced`, `applyTransition`) take the executor of
 * the row's transaction and are plain SQL with a fixed text, so they can run as
 * prepared statements on a bare `pg` client.
 */
@Injectable()
export class NotificationRepository {
  /** The fused write's SQL per fence text (fixed texts, so this stays small). */
  private readonly fencedWriteSql = new Map<string, string>();

  constructor(@InjectNotificationsRetryDataSource() private readonly dataSource: DataSource) {}

  /**
   * The oldest due rows of the given channels, at most `limit` in all and at
   * most each channel's own quota. One range scan of `notifications_due_idx`
   * per channel, merged by due time: rows of channels not listed are never
   * read, however many of them are due at the head.
   */
  async findDueCandidates(
    channels: readonly ChannelQuota[],
    now: Date,
    limit: number,
    /** Rows to leave out: those still in flight when drain mode claims ahead. */
    exclude: readonly string[] = [],
  ): Promise<DueCandidate[]> {
    if (channels.length === 0 || limit < 1) return [];
    const rows: Array<{ id: string; channel: string; due_at: Date }> = await this.dataSource.query(
      CANDIDATE_SCAN,
      candidateScanParams(channels, now, limit, exclude),
    );
    return rows.map((row) => ({ id: row.id, channel: row.channel, dueAt: row.due_at }));
  }

  /**
   * What a cycle reads before it sends anything, in one round trip: the
   * candidates (exactly `findDueCandidates`), the due rows of every channel
   * outside `channels` (for the channel-disabled count) and the failed backlog
   * (`countFailedBacklog`). With the lease, the channel catalog and the release,
   * a cycle with nothing to do is 4 round trips.
   */
  async cycleSnapshot(
    channels: readonly ChannelQuota[],
    now: Date,
    limit: number,
    /** Candidates to leave out: rows whose provider call from an earlier cycle still runs. */
    exclude: readonly string[] = [],
  ): Promise<CycleSnapshot> {
    const rows: Array<{
      kind: 'candidate' | 'excluded' | 'backlog';
      id: string | null;
      channel: string;
      due_at: Date | null;
      n: number | null;
    }> = await this.dataSource.query(
      `WITH candidates AS (${CANDIDATE_SCAN})
       SELECT 'candidate' AS kind, id, channel, due_at, NULL::int AS n FROM candidates
       UNION ALL
       SELECT 'excluded', NULL, n.channel, NULL, count(*)::int
         FROM notifications n
        WHERE n.due_at <= $3 AND NOT (n.channel = ANY($1::text[]))
        GROUP BY n.channel
       UNION ALL
       SELECT 'backlog', NULL, channel, NULL, count(*)::int
         FROM notifications
        WHERE status = 'Failed' AND next_attempt_at IS NOT NULL
        GROUP BY channel`,
      candidateScanParams(channels, now, Math.max(0, limit), exclude),
    );
    const snapshot: CycleSnapshot = { candidates: [], excludedDue: [], failedBacklog: [] };
    for (const row of rows) {
      if (row.kind === 'candidate' && row.id !== null && row.due_at !== null) {
        snapshot.candidates.push({ id: row.id, channel: row.channel, dueAt: row.due_at });
      } else if (row.kind === 'excluded' && row.n !== null) {
        snapshot.excludedDue.push({ channel: row.channel, due: row.n });
      } else if (row.kind === 'backlog' && row.n !== null) {
        snapshot.failedBacklog.push({ channel: row.channel, rows: row.n });
      }
    }
    // UNION ALL keeps no order of its own.
    snapshot.candidates.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
    snapshot.excludedDue.sort(byChannel);
    snapshot.failedBacklog.sort(byChannel);
    return snapshot;
  }

  /**
   * Locks the row for this unit of work if it is still due, still of the same
   * channel and nobody else holds it. Null means skip it: taken by another worker
   * or the dispatcher, or no longer due. The due condition is re-checked by
   * PostgreSQL on the newest row version once the lock is granted.
   */
  async lockIfDue(
    executor: SqlExecutor,
    candidate: DueCandidate,
    now: Date,
  ): Promise<ClaimedNotification | null> {
    const rows = (await executor.query(
      `SELECT ${CLAIMED_NOTIFICATION_COLUMNS}
         FROM notifications
        WHERE id = $1 AND channel = $2 AND due_at <= $3
          FOR UPDATE SKIP LOCKED`,
      [candidate.id, candidate.channel, now],
    )) as ClaimedNotificationRow[];
    return rows[0] ? toClaimedNotification(rows[0]) : null;
  }

  /** Writes a row's outcome (for a lock without an SQL fence, after its `confirm()`). */
  async applyTransition(
    executor: SqlExecutor,
    id: string,
    transition: RowTransition,
  ): Promise<void> {
    await executor.query(
      `UPDATE notifications SET ${SET_TRANSITION} WHERE id = $1`,
      transitionParams(id, transition),
    );
  }

  /**
   * The fence, the row's new values and, for a final outcome, its outbox event,
   * in one statement. False, with nothing written, when the fence query finds
   * no row: the lease is gone. The row is locked by this transaction, so the
   * fence is the only reason the UPDATE can miss it.
   */
  async applyTransitionFenced(
    executor: SqlExecutor,
    fence: SqlFence,
    id: string,
    transition: RowTransition,
    event: OutboxRow | null,
  ): Promise<boolean> {
    const rows = (await executor.query(this.fencedWrite(fence), [
      ...fence.params,
      ...transitionParams(id, transition),
      event?.id ?? null,
      event?.topic ?? null,
      event?.messageKey ?? null,
      event?.contractVersion ?? null,
      event?.payload ?? null,
      event?.headers ?? null,
    ])) as Array<{ written: number }>;
    return rows[0]?.written === 1;
  }

  /** Failed rows awaiting a retry (due or not), per channel: the backlog gauge. */
  async countFailedBacklog(): Promise<FailedBacklogCount[]> {
    return this.dataSource.query(
      `SELECT channel, count(*)::int AS rows
         FROM notifications
        WHERE status = 'Failed' AND next_attempt_at IS NOT NULL
        GROUP BY channel
        ORDER BY channel`,
    );
  }

  /**
   * `WITH fence AS (<fence>), updated AS (UPDATE … WHERE EXISTS fence),
   * appended AS (INSERT outbox … FROM updated)`: the fence's own parameters come
   * first ($1…$n), ours are renumbered after them. The INSERT adds a row only
   * when an event is given ($n+10 not null) and the UPDATE happened.
   */
  private fencedWrite(fence: SqlFence): string {
    const key = `${fence.params.length}:${fence.sql}`;
    let sql = this.fencedWriteSql.get(key);
    if (sql) return sql;
    const n = fence.params.length;
    const p = (i: number): string => `$${n + i}`;
    const set = SET_TRANSITION.replace(/\$(\d+)/g, (_, i: string) => p(Number(i)));
    const e = (i: number): string => p(TRANSITION_PARAMS + i);
    sql = `WITH fence AS (${fence.sql}),
            updated AS (
              UPDATE notifications SET ${set}
               WHERE id = ${p(1)} AND EXISTS (SELECT 1 FROM fence)
              RETURNING id
            ),
            appended AS (
              INSERT INTO notification_outbox (id, topic, message_key, contract_version, payload, headers)
              SELECT ${e(1)}::uuid, ${e(2)}::text, ${e(3)}::text, ${e(4)}::int, ${e(5)}::jsonb, ${e(6)}::jsonb
                FROM updated
               WHERE ${e(1)}::uuid IS NOT NULL
            )
       SELECT count(*)::int AS written FROM updated`;
    this.fencedWriteSql.set(key, sql);
    return sql;
  }
}

function candidateScanParams(
  channels: readonly ChannelQuota[],
  now: Date,
  limit: number,
  exclude: readonly string[],
): unknown[] {
  return [
    channels.map((c) => c.channel),
    channels.map((c) => Math.min(c.quota, limit)),
    now,
    limit,
    exclude,
  ];
}

function transitionParams(id: string, t: RowTransition): unknown[] {
  return [
    id,
    t.status,
    t.attempts,
    t.nextAttemptAt,
    t.scheduledAt,
    t.providerMessageId,
    t.sentAt,
    t.lastErrorCode,
    t.lastErrorMessage,
  ];
}

function byChannel(a: { channel: string }, b: { channel: string }): number {
  return a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0;
}
