import type { Lease } from './lease';

/**
 * Makes one instance the owner of a cycle. Expiry must be judged by one clock
 * that all instances share (the default uses the database's), never by the
 * instances' own clocks.
 */
export abstract class DistributedLock {
  /** A lease, or null when another owner holds an unexpired one. */
  abstract acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null>;

  /** Releases the lease if it is still this one; a no-op once someone else took over. */
  abstract release(lease: Lease): Promise<void>;
}
