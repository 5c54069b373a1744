/**
 * The worker's notion of "now" for due checks and backoff; injectable so
 * tests control time. The default, DatabaseClock, follows the database.
 */
export abstract class Clock {
  abstract now(): Date;

  /**
   * Told the database's time whenever the cycle learns it (at each lease
   * acquire). A clock that follows the database takes it; one that keeps its
   * own time (a test's, a host's) ignores it.
   */
  observeDatabaseTime(databaseNow: Date): void {
    void databaseNow;
  }
}

/** This process's wall clock. */
export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

/**
 * The database's clock (DESIGN §3.1), read without a round trip: the wall
 * clock corrected by the offset seen at the last lease acquire. Due checks,
 * backoff and the lease then agree on one clock whatever the app servers'
 * clocks say; until the first acquire it is the wall clock.
 */
export class DatabaseClock extends Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  override observeDatabaseTime(databaseNow: Date): void {
    this.offsetMs = databaseNow.getTime() - Date.now();
  }
}
