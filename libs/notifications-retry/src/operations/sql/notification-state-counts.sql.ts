import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { liveClaim } from './notification-list';

/**
 * Rows per channel and state, one row per channel that has any. The backlog
 * states (due, deferred, claimed, retrying) are all rows with a `due_at`:
 * read from notifications_due_idx, never the Sent bulk of the table. Terminal
 * rows are counted by their own condition, Sent rows only over the last hour.
 */
export function compileNotificationStateCounts(dataSource: DataSource): BoundStatement<never> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<never>();
  const dueAt = n.column('dueAt');
  const status = n.column('status');
  const live = liveClaim(n);
  return p.compile(
    'notification_state_counts',
    `SELECT channel,
            sum(due)::int AS "due", sum(deferred)::int AS "deferred", sum(claimed)::int AS "claimed",
            sum(retrying)::int AS "retrying", sum(terminal)::int AS "terminal",
            sum(sent)::int AS "sentLastHour"
       FROM (
         SELECT ${n.column('channel')} AS channel,
                count(*) FILTER (WHERE ${dueAt} <= now()) AS due,
                count(*) FILTER (WHERE ${status} = 'Pending' AND ${n.column('scheduledAt')} > now() AND NOT ${live}) AS deferred,
                count(*) FILTER (WHERE ${live}) AS claimed,
                count(*) FILTER (WHERE ${status} = 'Failed' AND ${n.column('nextAttemptAt')} > now() AND NOT ${live}) AS retrying,
                0 AS terminal, 0 AS sent
           FROM ${n.table}
          WHERE ${dueAt} IS NOT NULL
          GROUP BY 1
         UNION ALL
         SELECT ${n.column('channel')}, 0, 0, 0, 0, count(*), 0
           FROM ${n.table}
          WHERE ${status} = 'Failed' AND ${n.column('nextAttemptAt')} IS NULL
          GROUP BY 1
         UNION ALL
         SELECT ${n.column('channel')}, 0, 0, 0, 0, 0, count(*)
           FROM ${n.table}
          WHERE ${status} = 'Sent' AND ${n.column('updatedAt')} >= now() - interval '1 hour'
          GROUP BY 1
       ) AS counted
      GROUP BY channel
      ORDER BY channel`,
  );
}
