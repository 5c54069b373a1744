import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../distributed-lock.entity';
import { entitySql } from './entity-sql';

/**
 * The default lease's fence: its row while it is still this owner's and
 * unexpired at this statement, share-locked so a takeover waits until the
 * statement that embeds the fence has committed. $1 key, $2 owner, $3 token.
 */
export function leaseFenceSql(dataSource: DataSource): string {
  const l = entitySql(dataSource, DistributedLockEntity);
  return `SELECT ${l.column('expiresAt')} AS expires_at FROM ${l.table}
           WHERE ${l.column('key')} = $1 AND ${l.column('owner')} = $2 AND ${l.column('fencingToken')} = $3
             AND ${l.column('expiresAt')} > statement_timestamp()
             FOR SHARE`;
}
