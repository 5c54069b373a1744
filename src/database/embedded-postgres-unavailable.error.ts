/**
 * The embedded PostgreSQL cannot run where this process is: its server's
 * user cannot reach its binaries or its directories, and copying them did
 * not help. The message names the path, the reason and the fix.
 */
export class EmbeddedPostgresUnavailableError extends Error {
  override readonly name = 'EmbeddedPostgresUnavailableError';

  constructor(
    /** What the server's user could not reach. */
    readonly path: string,
    /** Why, in words: which directory it cannot enter, or what running it answered. */
    readonly reason: string,
  ) {
    super(
      `The embedded PostgreSQL cannot start: ${reason}. ` +
        'Fix: clone the repository into a directory every user can enter (not under /root or a ' +
        '`mktemp -d` folder), or set DATABASE_URL to a PostgreSQL server (the app and the tests ' +
        'then use it instead of an embedded one).',
    );
  }
}
