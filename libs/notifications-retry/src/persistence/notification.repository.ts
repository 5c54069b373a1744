import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { RowTransition } from '../cycle/row-transition';
import { NotificationEntity } from './notification.entity';

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

/**
 * SQL for `notifications`, nothing else: what to do with rows is decided in the
 * cycle. Every value reaches SQL as a parameter.
 */
@Injectable()
export class NotificationRepository {
  constructor(private readonly dataSource: DataSource) {}

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
  ): Promise<DueCandidate[]> {
    if (channels.length === 0 || limit < 1) return [];
    const rows: Array<{ id: string; channel: string; due_at: Date }> = await this.dataSource.query(
      `SELECT c.id, c.channel, c.due_at
         FROM unnest($1::text[], $2::int[]) AS ch(key, quota)
         CROSS JOIN LATERAL (
           SELECT n.id, n.channel, n.due_at
             FROM notifications n
            WHERE n.channel = ch.key AND n.due_at <= $3
            ORDER BY n.due_at
            LIMIT ch.quota
         ) AS c
        ORDER BY c.due_at
        LIMIT $4`,
      [channels.map((c) => c.channel), channels.map((c) => Math.min(c.quota, limit)), now, limit],
    );
    return rows.map((row) => ({ id: row.id, channel: row.channel, dueAt: row.due_at }));
  }

  /**
   * Locks the row for this unit of work if it is still due, still of the same
   * channel and nobody else holds it. Null means skip it: taken by another worker
   * or the dispatcher, or no longer due. The due condition is re-checked by
   * PostgreSQL on the newest row version once the lock is granted.
   */
  lockIfDue(
    manager: EntityManager,
    candidate: DueCandidate,
    now: Date,
  ): Promise<NotificationEntity | null> {
    return manager
      .createQueryBuilder(NotificationEntity, 'n')
      .where('n.id = :id', { id: candidate.id })
      .andWhere('n.channel = :channel', { channel: candidate.channel })
      .andWhere('n.dueAt <= :now', { now })
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
  }

  async applyTransition(
    manager: EntityManager,
    id: string,
    transition: RowTransition,
  ): Promise<void> {
    await manager.update(
      NotificationEntity,
      { id },
      {
        status: transition.status,
        attempts: transition.attempts,
        nextAttemptAt: transition.nextAttemptAt,
        scheduledAt: transition.scheduledAt,
        providerMessageId: transition.providerMessageId,
        sentAt: transition.sentAt,
        lastErrorCode: transition.lastErrorCode,
        lastErrorMessage: transition.lastErrorMessage,
        updatedAt: () => 'now()',
      },
    );
  }

  /** Failed rows awaiting a retry (due or not), per channel: the backlog gauge. */
  async countFailedBacklog(): Promise<Array<{ channel: string; rows: number }>> {
    return this.dataSource.query(
      `SELECT channel, count(*)::int AS rows
         FROM notifications
        WHERE status = 'Failed' AND next_attempt_at IS NOT NULL
        GROUP BY channel
        ORDER BY channel`,
    );
  }

  /** Due rows per channel outside `included`; their rows are counted, never touched. */
  async countDueOutside(included: readonly string[], now: Date): Promise<ExcludedDueCount[]> {
    const rows: Array<{ channel: string; due: number }> = await this.dataSource.query(
      `SELECT n.channel, count(*)::int AS due
         FROM notifications n
        WHERE n.due_at <= $1 AND NOT (n.channel = ANY($2::text[]))
        GROUP BY n.channel
        ORDER BY n.channel`,
      [now, included],
    );
    return rows;
  }
}
