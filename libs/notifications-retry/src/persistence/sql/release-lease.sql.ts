import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../distributed-lock.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type ReleaseLeaseValue = 'key' | 'owner' | 'fencingToken' | 'cycleCompleted';

/**
 * Expires the lease if it is still this owner's; expire rather than delete, so
 * the token keeps counting. With `cycleCompleted`, also records the cycle as
 * the last completed one, by the database clock (what /health reads on every
 * instance): matched on owner and fencing token, so only a cycle nobody took
 * the lease from is recorded, even one that outlived its lease.
 */
export function compileReleaseLease(dataSource: DataSource): BoundStatement<ReleaseLeaseValue> {
  const l = entitySql(dataSource, DistributedLockEntity);
  const p = new StatementParameters<ReleaseLeaseValue>();
  const completed = `${p.ref('cycleCompleted')}::boolean`;
  const expiresAt = l.column('expiresAt');
  return p.compile(
    'release_lease',
    `UPDATE ${l.table}
        SET ${expiresAt} = least(${expiresAt}, statement_timestamp()),
            ${l.column('lastCompletedAt')} =
              CASE WHEN ${completed} THEN statement_timestamp() ELSE ${l.column('lastCompletedAt')} END,
            ${l.column('lastCompletedBy')} =
              CASE WHEN ${completed} THEN ${l.column('owner')} ELSE ${l.column('lastCompletedBy')} END
      WHERE ${l.column('key')} = ${p.ref('key')} AND ${l.column('owner')} = ${p.ref('owner')}
        AND ${l.column('fencingToken')} = ${p.ref('fencingToken')}
        AND (${expiresAt} > statement_timestamp() OR ${completed})
     RETURNING ${l.column('key')} AS key`,
  );
}
