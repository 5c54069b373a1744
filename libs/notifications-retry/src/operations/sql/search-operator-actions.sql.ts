import type { DataSource } from 'typeorm';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { afterPositionSql, keysetTimeSql } from './keyset';

export type SearchOperatorActionsValue =
  'actor' | 'action' | 'since' | 'pattern' | 'afterAt' | 'afterId' | 'limit';

/**
 * Audit rows, newest first, of the `actor` and `action` asked for, at or after
 * `since`, whose reason matches the ILIKE `pattern` (null = any), a page of
 * `limit` after `(afterAt, afterId)`. Walks
 * notification_operator_actions_created_at_idx backwards.
 */
export function compileSearchOperatorActions(
  dataSource: DataSource,
): BoundStatement<SearchOperatorActionsValue> {
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<SearchOperatorActionsValue>();
  const actor = p.ref('actor');
  const action = p.ref('action');
  const since = p.ref('since');
  const pattern = p.ref('pattern');
  const key = a.column('createdAt');
  const id = a.column('id');
  return p.compile(
    'search_operator_actions',
    `SELECT ${selectColumns(a, ['id', 'action', 'actor', 'reason', 'filter', 'rows', 'createdAt'])},
            ${keysetTimeSql(key)} AS "keyAt", ${id}::text AS "keyId"
       FROM ${a.table}
      WHERE (${actor}::text IS NULL OR ${a.column('actor')} = ${actor})
        AND (${action}::text IS NULL OR ${a.column('action')} = ${action})
        AND (${since}::timestamptz IS NULL OR ${key} >= ${since})
        AND (${pattern}::text IS NULL OR ${a.column('reason')} ILIKE ${pattern})
        AND ${afterPositionSql({ column: key, value: p.ref('afterAt') }, { column: id, value: p.ref('afterId') }, 'desc')}
      ORDER BY ${key} DESC, ${id} DESC
      LIMIT ${p.ref('limit')}`,
  );
}
