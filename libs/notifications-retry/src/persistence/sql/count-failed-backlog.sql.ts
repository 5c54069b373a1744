import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../notification.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type CountFailedBacklogValue = 'cap';

/**
 * Failed rows awaiting a retry (due or not), per channel, each count capped
 * at `cap`: the backlog gauge. Channels by a skip scan of
 * `notifications_failed_backlog_idx`, then an index-only count per channel
 * that stops at the cap, so a backlog of millions costs what the cap costs.
 */
export function compileCountFailedBacklog(
  dataSource: DataSource,
): BoundStatement<CountFailedBacklogValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<CountFailedBacklogValue>();
  const channel = n.column('channel');
  const backlog = (alias: string): string =>
    `${alias}.${n.column('status')} = 'Failed' AND ${alias}.${n.column('nextAttemptAt')} IS NOT NULL`;
  return p.compile(
    'count_failed_backlog',
    `WITH RECURSIVE channels AS (
       (SELECT w.${channel} AS channel FROM ${n.table} AS w
         WHERE ${backlog('w')} ORDER BY w.${channel} LIMIT 1)
       UNION ALL
       SELECT (SELECT x.${channel} FROM ${n.table} AS x
                WHERE ${backlog('x')} AND x.${channel} > channels.channel
                ORDER BY x.${channel} LIMIT 1)
         FROM channels WHERE channels.channel IS NOT NULL
     )
     SELECT channels.channel AS channel,
            (SELECT count(*) FROM (
               SELECT 1 FROM ${n.table} AS y
                WHERE y.${channel} = channels.channel AND ${backlog('y')}
                LIMIT ${p.ref('cap')}) AS backlog)::int AS rows
       FROM channels
      WHERE channels.channel IS NOT NULL
      ORDER BY channels.channel`,
  );
}
