import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { liveClaimSql, terminalFilterSql, type RedriveFilterValue } from './terminal-filter.sql';

/**
 * What a redrive with this filter would take, by channel × error code: rows it
 * may reset, and rows it leaves because a worker holds a live claim on them.
 * `channel`, `errorCode`, `since`, `ids` (uuid[]); null = any.
 */
export function compileRedrivePreview(dataSource: DataSource): BoundStatement<RedriveFilterValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<RedriveFilterValue>();
  const liveClaim = liveClaimSql(n);
  return p.compile(
    'redrive_preview',
    `SELECT ${n.column('channel')} AS "channel", ${n.column('lastErrorCode')} AS "errorCode",
            count(*) FILTER (WHERE NOT (${liveClaim}))::int AS "eligible",
            count(*) FILTER (WHERE ${liveClaim})::int AS "claimed"
       FROM ${n.table}
      WHERE ${terminalFilterSql(n, p, { ids: true })}
      GROUP BY ${n.column('channel')}, ${n.column('lastErrorCode')}
      ORDER BY "channel", "errorCode" NULLS FIRST`,
  );
}
