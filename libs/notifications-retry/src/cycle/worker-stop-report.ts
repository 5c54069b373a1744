/** What became of this instance's lease when the worker stopped. */
export type LeaseAtStop =
  /** Released after the last write: another instance may take the next cycle at once. */
  | 'released'
  /** None held: no cycle was running, or its lease had been lost to another instance. */
  | 'not-held'
  /** The release failed (the database was gone): it lapses after `lockTtlMs`. */
  | 'release-failed';

/**
 * What the worker's shutdown (`beforeApplicationShutdown`) drained, for the
 * host's one summary line of a stop. The events of the cycle in flight
 * (`cycle-completed`, `claims-released`, ...) are logged as usual; this sums
 * them up with what only the stop knows.
 */
export interface RetryWorkerStopReport {
  /** A cycle of this instance was running when the stop began; it stopped claiming and was waited for. */
  readonly cycleInFlight: boolean;
  /** Provider calls running when the stop began (calls written off earlier included). */
  readonly callsInFlight: number;
  /** Of those, the calls still running when `shutdownGraceMs` ran out, and so cut. */
  readonly callsCut: number;
  /** Outcomes (sent, retried, terminal, deferred) the cycle in flight wrote after the stop began. */
  readonly rowsWritten: number;
  /**
   * Claimed rows the cycle in flight handed back untouched after the stop
   * began (queued but never called, or their call cut): another instance may
   * take them at once.
   */
  readonly claimsHandedBack: number;
  readonly lease: LeaseAtStop;
  /** From the stop's start to the cycle's last write and its lease release. */
  readonly durationMs: number;
}
