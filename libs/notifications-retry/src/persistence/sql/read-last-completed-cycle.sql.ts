import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../distributed-lock.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type ReadLastCompletedCycleValue = 'key';

/**
 * The last completed cycle the lease row records, with the database's time of
 * the read, for /health. A plain read: it never waits for the row's lock,
 * whoever holds it (a cycle's fenced write, a stuck session). One row even
 * when the lease row does not exist yet (nothing recorded, null).
 */
export function compileReadLastCompletedCycle(
  dataSource: DataSource,
): BoundStatement<ReadLastCompletedCycleValue> {
  const l = entitySql(dataSource, DistributedLockEntity);
  const p = new StatementParameters<ReadLastCompletedCycleValue>();
  return p.compile(
    'read_last_completed_cycle',
    `SELECT statement_timestamp() AS database_now,
            l.${l.column('lastCompletedAt')} AS last_completed_at,
            l.${l.column('lastCompletedBy')} AS last_completed_by
       FROM (SELECT 1) AS one
       LEFT JOIN ${l.table} AS l ON l.${l.column('key')} = ${p.ref('key')}`,
  );
}
