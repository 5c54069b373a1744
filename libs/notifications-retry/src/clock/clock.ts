import { performance } from 'node:perf_hooks';

/**
 * The worker's notion of "now" for due checks and backoff. The default,
 * DatabaseClock, follows the database (DESIGN §3.1).
 *
 * A custom Clock is a test seam: due checks and backoff follow it, so a clock
 * that runs ahead of the database sends quiet-hours rows early and shortens
 * backoff. It never decides whether a claim is live: the claim statement
 * judges that by the database's own statement time, so no clock can take a
 * row another worker still holds.
 */
export abstract class Clock {
  abstract now(): Date;

  /**
   * Told the database's time whenever the cycle learns it (at each lease
   * acquire). A clock that follows the database takes it; one that keeps its
   * own time (a test's) ignores it.
   */
  observeDatabaseTime(databaseNow: Date): void {
    void databaseNow;
  }
}

/**
 * The database's clock (DESIGN §3.1), read without a round trip: the
 * database's time at the last lease acquire plus the monotonic time elapsed
 * since. A step of the machine's wall clock (NTP, a VM resumed, an operator)
 * moves no due check and no backoff; until the first acquire it is the wall
 * clock.
 */
export class DatabaseClock extends Clock {
  #anchor: { readonly databaseMs: number; readonly monotonicMs: number } | null = null;

  now(): Date {
    if (!this.#anchor) return new Date();
    return new Date(this.#anchor.databaseMs + (performance.now() - this.#anchor.monotonicMs));
  }

  override observeDatabaseTime(databaseNow: Date): void {
    this.#anchor = { databaseMs: databaseNow.getTime(), monotonicMs: performance.now() };
  }
}

/**
 * The clock a host registers when it means "real time": the database's, as
 * DatabaseClock (the process's own wall clock would let an app server whose
 * clock runs ahead send quiet-hours rows early).
 */
export class SystemClock extends DatabaseClock {}
