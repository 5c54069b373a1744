import type { EntityManager } from 'typeorm';
import type { Lease } from './lease';
import type { SqlFence } from './sql-fence';

/**
 * Makes one instance the owner of a cycle. Expiry must be judged by one clock
 * that all instances share (the default uses the database's), never by the
 * instances' own clocks.
 */
export abstract class DistributedLock {
  /** A lease, or null when another owner holds an unexpired one. */
  abstract acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null>;

  /**
   * The fence, checked inside a row's transaction just before its outcome is
   * written (by a lock without `sqlFence()`, for every row; with one, only for
   * the rare separate write of an unrecorded outcome). False means the lease
   * expired or was taken over, and the transaction is rolled back. The default
   * checks in that same transaction and holds a share lock on the lease until
   * it commits, so a takeover waits for it.
   */
  abstract confirm(lease: Lease, manager: EntityManager): Promise<boolean>;

  /**
   * Optional: the same fence as `confirm()`, stated as SQL (see `SqlFence`).
   * With it the cycle checks the fence inside the one statement that writes
   * the row's outcome and its event, and runs the row's transaction on a bare
   * pooled `pg` client. This base class returns null (`PostgresDistributedLock`
   * implements it); the cycle then runs `confirm()`, the UPDATE and, for a
   * final outcome, the outbox INSERT as separate statements in a TypeORM
   * transaction: one or two statements more per row.
   */
  sqlFence(lease: Lease): SqlFence | null {
    void lease;
    return null;
  }

  /** Releases the lease if it is still this one; a no-op once someone else took over. */
  abstract release(lease: Lease): Promise<void>;
}
