import type { DataSource } from 'typeorm';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type UpdateOperatorActionRowsValue = 'actionId' | 'rows';

/** The row count of an action, once its batches are done. `actionId`, `rows`. */
export function compileUpdateOperatorActionRows(
  dataSource: DataSource,
): BoundStatement<UpdateOperatorActionRowsValue> {
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<UpdateOperatorActionRowsValue>();
  return p.compile(
    'update_operator_action_rows',
    `UPDATE ${a.table} SET ${a.column('rows')} = ${p.ref('rows')} WHERE ${a.column('id')} = ${p.ref('actionId')}`,
  );
}
