import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { liveClaimSql } from './terminal-filter.sql';

/**
 * Per channel, by the database clock: the failed backlog (Failed awaiting a
 * retry), rows due now, deferred Pending rows, terminal Failed rows and rows
 * under a live claim. Sent rows are left out before grouping. No parameters.
 */
export function compileChannelRowCounts(dataSource: DataSource): BoundStatement<never> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<never>();
  const status = n.column('status');
  const nextAttemptAt = n.column('nextAttemptAt');
  return p.compile(
    'channel_row_counts',
    `SELECT ${n.column('channel')} AS "channel",
            count(*) FILTER (WHERE ${status} = 'Failed' AND ${nextAttemptAt} IS NOT NULL)::int AS "backlog",
            count(*) FILTER (WHERE ${n.column('dueAt')} <= now())::int AS "due",
            count(*) FILTER (WHERE ${status} = 'Pending' AND ${n.column('scheduledAt')} IS NOT NULL)::int AS "deferred",
            count(*) FILTER (WHERE ${status} = 'Failed' AND ${nextAttemptAt} IS NULL)::int AS "terminal",
            count(*) FILTER (WHERE ${liveClaimSql(n)})::int AS "liveClaims"
       FROM ${n.table}
      WHERE ${status} <> 'Sent'
      GROUP BY ${n.column('channel')}
      ORDER BY ${n.column('channel')}`,
  );
}
