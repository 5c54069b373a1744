import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../../persistence/distributed-lock.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ReadLeaseValue = 'key';

/** A lease with the database's view of it (`databaseNow`, `live`). `key`: the lease key. */
export function compileReadLease(dataSource: DataSource): BoundStatement<ReadLeaseValue> {
  const l = entitySql(dataSource, DistributedLockEntity);
  const p = new StatementParameters<ReadLeaseValue>();
  return p.compile(
    'read_lease',
    `SELECT ${selectColumns(l, ['key', 'owner', 'fencingToken', 'acquiredAt', 'expiresAt'])},
            now() AS "databaseNow", ${l.column('expiresAt')} > now() AS "live"
       FROM ${l.table}
      WHERE ${l.column('key')} = ${p.ref('key')}`,
  );
}
