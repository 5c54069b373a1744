import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { terminalFilterSql, type TerminalFilterValue } from './terminal-filter.sql';

/** Terminal Failed rows by channel × error code. `channel`, `errorCode`, `since`; null = any. */
export function compileTerminalFailuresStats(
  dataSource: DataSource,
): BoundStatement<TerminalFilterValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<TerminalFilterValue>();
  const updatedAt = n.column('updatedAt');
  return p.compile(
    'terminal_failures_stats',
    `SELECT ${n.column('channel')} AS "channel", ${n.column('lastErrorCode')} AS "errorCode",
            count(*)::int AS "count", min(${updatedAt}) AS "oldest", max(${updatedAt}) AS "newest"
       FROM ${n.table}
      WHERE ${terminalFilterSql(n, p, { ids: false })}
      GROUP BY ${n.column('channel')}, ${n.column('lastErrorCode')}
      ORDER BY "count" DESC, "channel", "errorCode" NULLS FIRST`,
  );
}
