import type { CompletedCycleRecord } from './completed-cycle-record';
import type { Lease } from '../vocabulary/lease';
import type { LeaseFence } from '../vocabulary/lease-fence';

export interface LockReleaseOptions {
  /**
   * The cycle under this lease completed: record it with the release, by the
   * lock's clock, so /health on every instance can tell whether some instance
   * still completes cycles (DESIGN §5).
   */
  readonly cycleCompleted?: boolean;
}

/**
 * Makes one instance the owner of a cycle. Expiry must be judged by one clock
 * that all instances share (the default uses the database's), never by the
 * instances' own clocks.
 */
export abstract class DistributedLock {
  /** A lease, or null when another owner holds an unexpired one. */
  abstract acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null>;

  /**
   * The fence every claim and every outcome write embeds (see LeaseFence):
   * the cycle has no other way to write, so a lock without one cannot keep a
   * former owner from writing.
   */
  abstract readonly fence: LeaseFence;

  /**
   * Releases the lease if it is still this one; a no-op once someone else took
   * over. With `cycleCompleted`, records the completed cycle as well, if no
   * one took over (even when the lease ran out meanwhile).
   */
  abstract release(lease: Lease, options?: LockReleaseOptions): Promise<void>;

  /**
   * The last completed cycle recorded under `key`, for /health. Must answer
   * whoever holds the lease or its row, and whatever state the holder is in (a
   * stuck session that keeps the row locked included): a plain read, never a
   * locking one. Optional: without it, /health judges by this instance's own
   * ticks, where a tick skipped for another owner's lease counts as on time.
   */
  lastCompletedCycle?(key: string): Promise<CompletedCycleRecord>;
}
