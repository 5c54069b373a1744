import type { DataSource } from 'typeorm';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type InsertOperatorActionValue = 'action' | 'actor' | 'reason' | 'filter' | 'rows';

/** One audit row. `action`, `actor`, `reason`, `filter` (JSON text, stored as jsonb), `rows`. Returns `id`, `createdAt`. */
export function compileInsertOperatorAction(
  dataSource: DataSource,
): BoundStatement<InsertOperatorActionValue> {
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<InsertOperatorActionValue>();
  return p.compile(
    'insert_operator_action',
    `INSERT INTO ${a.table} (${a.column('action')}, ${a.column('actor')}, ${a.column('reason')},
                             ${a.column('filter')}, ${a.column('rows')})
     VALUES (${p.ref('action')}, ${p.ref('actor')}, ${p.ref('reason')}, ${p.ref('filter')}::jsonb, ${p.ref('rows')})
     RETURNING ${selectColumns(a, ['id', 'createdAt'])}`,
  );
}
