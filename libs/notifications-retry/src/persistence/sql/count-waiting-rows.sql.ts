import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../notification.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type CountWaitingRowsValue = 'claimed' | 'now' | 'cap';

/**
 * Due rows of every channel the cycle left out of its claim, per channel, each
 * count capped at `cap` (DESIGN §3.2: bounded, and never part of the claim).
 * The channels come from a skip scan of `notifications_due_idx` (one index
 * probe per channel that has rows in it), so channels the catalog does not
 * know are found too; the channels listed in `claimed` are passed over
 * without counting. Cost: channels × log(rows) + the capped counts.
 */
export function compileCountWaitingRows(
  dataSource: DataSource,
): BoundStatement<CountWaitingRowsValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<CountWaitingRowsValue>();
  const channel = n.column('channel');
  const dueAt = n.column('dueAt');
  return p.compile(
    'count_waiting_rows',
    `WITH RECURSIVE channels AS (
       (SELECT ${channel} AS channel FROM ${n.table}
         WHERE ${dueAt} IS NOT NULL ORDER BY ${channel} LIMIT 1)
       UNION ALL
       SELECT (SELECT x.${channel} FROM ${n.table} AS x
                WHERE x.${dueAt} IS NOT NULL AND x.${channel} > channels.channel
                ORDER BY x.${channel} LIMIT 1)
         FROM channels WHERE channels.channel IS NOT NULL
     )
     SELECT channels.channel AS channel,
            (SELECT count(*) FROM (
               SELECT 1 FROM ${n.table} AS y
                WHERE y.${channel} = channels.channel AND y.${dueAt} <= ${p.ref('now')}
                LIMIT ${p.ref('cap')}) AS due)::int AS rows
       FROM channels
      WHERE channels.channel IS NOT NULL AND NOT (channels.channel = ANY(${p.ref('claimed')}::text[]))`,
  );
}
