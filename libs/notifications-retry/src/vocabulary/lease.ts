/** Proof of holding a distributed lock; the fencing token grows with every new owner. */
export interface Lease {
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
  /**
   * The database's time at the acquire, when the lock can tell it: the cycle's
   * clock is set from it (DESIGN §3.1), so due checks and backoff do not
   * depend on the app servers' clocks.
   */
  readonly acquiredAt?: Date;
}
