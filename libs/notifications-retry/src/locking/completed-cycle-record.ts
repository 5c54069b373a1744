/** The last cycle completed under a lease, as the lock's shared clock tells it. */
export interface CompletedCycleRecord {
  /** When it completed; null while no cycle under the lease was ever recorded. */
  readonly at: Date | null;
  /** The owner (instance id) whose cycle it was. */
  readonly by: string | null;
  /**
   * The lock's clock at the read (the default: the database's). `at` is judged
   * against it, never against an app server's clock.
   */
  readonly now: Date;
}
