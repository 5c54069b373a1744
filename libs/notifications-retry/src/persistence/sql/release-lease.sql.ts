import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../distributed-lock.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type ReleaseLeaseValue = 'key' | 'owner' | 'fencingToken';

/** Expires the lease if it is still this owner's; expire rather than delete, so the token keeps counting. */
export function compileReleaseLease(dataSource: DataSource): BoundStatement<ReleaseLeaseValue> {
  const l = entitySql(dataSource, DistributedLockEntity);
  const p = new StatementParameters<ReleaseLeaseValue>();
  return p.compile(
    'release_lease',
    `UPDATE ${l.table}
        SET ${l.column('expiresAt')} = statement_timestamp()
      WHERE ${l.column('key')} = ${p.ref('key')} AND ${l.column('owner')} = ${p.ref('owner')}
        AND ${l.column('fencingToken')} = ${p.ref('fencingToken')}
        AND ${l.column('expiresAt')} > statement_timestamp()
     RETURNING ${l.column('key')} AS key`,
  );
}
