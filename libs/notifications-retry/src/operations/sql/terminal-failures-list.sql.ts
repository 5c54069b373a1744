import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { terminalFilterSql, type TerminalFilterValue } from './terminal-filter.sql';

export type TerminalFailuresListValue = TerminalFilterValue | 'limit';

/**
 * Terminal Failed rows (Failed, next_attempt_at null), newest failure first.
 * `channel`, `errorCode`, `since` (updated_at); null = any; `limit`.
 * The address is returned for masking only, and with the subject and body for
 * redacting the stored error: the caller never shows any of them.
 */
export function compileTerminalFailuresList(
  dataSource: DataSource,
): BoundStatement<TerminalFailuresListValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<TerminalFailuresListValue>();
  const columns = selectColumns(n, [
    'id',
    'channel',
    'recipientAddress',
    'subject',
    'body',
    'attempts',
    'lastErrorCode',
    'lastErrorMessage',
  ]);
  return p.compile(
    'terminal_failures_list',
    `SELECT ${columns},
            ${n.column('updatedAt')} AS "failedAt", ${n.column('createdAt')} AS "createdAt"
       FROM ${n.table}
      WHERE ${terminalFilterSql(n, p, { ids: false })}
      ORDER BY ${n.column('updatedAt')} DESC, ${n.column('id')}
      LIMIT ${p.ref('limit')}`,
  );
}
