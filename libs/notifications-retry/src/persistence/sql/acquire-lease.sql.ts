import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../distributed-lock.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type AcquireLeaseValue = 'key' | 'owner' | 'ttlMs';

/**
 * Takes the lease when nobody holds it or it has expired, by the database
 * clock, and returns the fencing token with the database's time of the
 * acquire (the cycle's clock, DESIGN §3.1). Never waits: a lease row locked by
 * a statement of the former owner (a fenced write in progress) reads as held,
 * and the next tick asks again.
 */
export function compileAcquireLease(dataSource: DataSource): BoundStatement<AcquireLeaseValue> {
  const l = entitySql(dataSource, DistributedLockEntity);
  const p = new StatementParameters<AcquireLeaseValue>();
  const key = p.ref('key');
  const owner = p.ref('owner');
  const expiry = `statement_timestamp() + make_interval(secs => ${p.ref('ttlMs')}::double precision / 1000)`;
  return p.compile(
    'acquire_lease',
    `WITH current AS (
       SELECT ${l.column('key')} AS key FROM ${l.table}
        WHERE ${l.column('key')} = ${key} FOR UPDATE SKIP LOCKED
     ),
     taken_over AS (
       UPDATE ${l.table} AS l
          SET ${l.column('owner')} = ${owner},
              ${l.column('fencingToken')} = l.${l.column('fencingToken')} + 1,
              ${l.column('acquiredAt')} = statement_timestamp(),
              ${l.column('expiresAt')} = ${expiry}
         FROM current
        WHERE l.${l.column('key')} = current.key AND l.${l.column('expiresAt')} <= statement_timestamp()
       RETURNING l.${l.column('fencingToken')} AS fencing_token, l.${l.column('acquiredAt')} AS acquired_at,
                 l.${l.column('expiresAt')} AS expires_at
     ),
     first AS (
       INSERT INTO ${l.table} (${l.column('key')}, ${l.column('owner')}, ${l.column('fencingToken')},
                               ${l.column('acquiredAt')}, ${l.column('expiresAt')})
       SELECT ${key}, ${owner}, 1, statement_timestamp(), ${expiry}
        WHERE NOT EXISTS (SELECT 1 FROM ${l.table} WHERE ${l.column('key')} = ${key})
       ON CONFLICT (${l.column('key')}) DO NOTHING
       RETURNING ${l.column('fencingToken')} AS fencing_token, ${l.column('acquiredAt')} AS acquired_at,
                 ${l.column('expiresAt')} AS expires_at
     )
     SELECT fencing_token, acquired_at, expires_at FROM taken_over
     UNION ALL
     SELECT fencing_token, acquired_at, expires_at FROM first`,
  );
}
