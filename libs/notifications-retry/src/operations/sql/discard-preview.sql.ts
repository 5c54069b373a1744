import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { discardFilterSql, type DiscardFilterValue } from './discard-filter';

/** How many rows a discard of the filter would take now (see `discardFilterSql`). Returns `rows`. */
export function compileDiscardPreview(dataSource: DataSource): BoundStatement<DiscardFilterValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<DiscardFilterValue>();
  return p.compile(
    'discard_preview',
    `SELECT count(*)::int AS "rows" FROM ${n.table} WHERE ${discardFilterSql(n, p)}`,
  );
}
