import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { DistributedLock } from './distributed-lock';
import type { Lease } from './lease';
import type { SqlFence } from './sql-fence';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';

/**
 * Lease in `distributed_locks`. One statement each way, and every time comparison
 * uses the database's `now()`, so clock skew between app instances cannot make
 * two of them believe they own the lease.
 */
@Injectable()
export class PostgresDistributedLock extends DistributedLock {
  constructor(@InjectNotificationsRetryDataSource() private readonly dataSource: DataSource) {
    super();
  }

  /**
   * Takes the lease when nobody holds it or it has expired. Never waits: when
   * the lease row is locked (a former owner's row transaction still holds its
   * share lock between a fenced write and its commit; it may be frozen), the
   * answer is "not acquired" and the next tick asks again. Waiting would hang
   * the cycle for as long as that transaction stays open.
   */
  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const rows: Array<{ fencing_token: string }> = await this.dataSource.query(
      `WITH current AS (
         SELECT key FROM distributed_locks WHERE key = $1 FOR UPDATE SKIP LOCKED
       ),
       taken_over AS (
         UPDATE distributed_locks AS l
            SET owner = $2,
                fencing_token = l.fencing_token + 1,
                acquired_at = now(),
                expires_at = now() + make_interval(secs => $3::double precision / 1000)
           FROM current
          WHERE l.key = current.key AND l.expires_at <= now()
         RETURNING l.fencing_token
       ),
       first AS (
         INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
         SELECT $1, $2, 1, now(), now() + make_interval(secs => $3::double precision / 1000)
          WHERE NOT EXISTS (SELECT 1 FROM distributed_locks WHERE key = $1)
         ON CONFLICT (key) DO NOTHING
         RETURNING fencing_token
       )
       SELECT fencing_token FROM taken_over
       UNION ALL
       SELECT fencing_token FROM first`,
      [key, owner, ttlMs],
    );
    const row = rows[0];
    return row ? { key, owner, fencingToken: Number(row.fencing_token) } : null;
  }

  async confirm(lease: Lease, manager: EntityManager): Promise<boolean> {
    const fence = this.sqlFence(lease);
    const rows: unknown[] = await manager.query(fence.sql, [...fence.params]);
    return rows.length === 1;
  }

  /**
   * A share lock on the lease row: a takeover's UPDATE waits until the row's
   * transaction ends. Expiry is judged at the write (`statement_timestamp()`),
   * not at BEGIN (`now()`): the transaction opened before the provider call, so
   * `now()` would accept a lease that ran out while the provider was answering.
   */
  override sqlFence(lease: Lease): SqlFence {
    return {
      sql: `SELECT 1 FROM distributed_locks
             WHERE key = $1 AND owner = $2 AND fencing_token = $3
               AND expires_at > statement_timestamp()
               FOR SHARE`,
      params: [lease.key, lease.owner, lease.fencingToken],
    };
  }

  async release(lease: Lease): Promise<void> {
    // Expire rather than delete: the row keeps the fencing token counting up.
    await this.dataSource.query(
      `UPDATE distributed_locks SET expires_at = now()
       WHERE key = $1 AND owner = $2 AND fencing_token = $3 AND expires_at > now()`,
      [lease.key, lease.owner, lease.fencingToken],
    );
  }
}
