import type { Lease } from './lease';
import type { LeaseFence } from './lease-fence';

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

  /** Releases the lease if it is still this one; a no-op once someone else took over. */
  abstract release(lease: Lease): Promise<void>;
}
