import { Client } from 'pg';

/** The settle statement as pg_stat_activity shows it (named or not, it carries its text). */
const SETTLE_STATEMENT = /UPDATE "notifications" AS n\s+SET "status"/;

/** How long the outbox is held at most while the settle statements that queue behind it are found. */
const HOLD_MS = 600;

export interface GroupCommitKill {
  /** Database clock when the backends were ended. */
  readonly at: Date;
  /** Instances (application_name) whose settle statements were ended. */
  readonly instanceIds: readonly string[];
  readonly backends: number;
}

/**
 * Kills the backends that carry group commits: holds `notification_outbox`
 * (EXCLUSIVE: reads go on, inserts wait) for a moment, so that the settle
 * statements in progress queue behind it, ends those backends with
 * pg_terminate_backend (57P01 to their clients, the statement rolled back),
 * then lets go. Null when no settle statement came within the hold.
 */
export async function killGroupCommits(databaseUrl: string): Promise<GroupCommitKill | null> {
  const blocker = new Client({ connectionString: databaseUrl, application_name: 'chaos-blocker' });
  await blocker.connect();
  try {
    await blocker.query(`SET lock_timeout = '1s'`);
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE notification_outbox IN EXCLUSIVE MODE');
    const until = performance.now() + HOLD_MS;
    while (performance.now() < until) {
      const { rows } = await blocker.query<{ pid: number; app: string; query: string }>(
        `SELECT pid, application_name AS app, query FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      const settling = rows.filter((row) => SETTLE_STATEMENT.test(row.query));
      if (settling.length > 0) {
        const { rows: ended } = await blocker.query<{ at: Date; ok: boolean }>(
          `SELECT clock_timestamp() AS at, pg_terminate_backend(pid) AS ok
             FROM unnest($1::int[]) AS pid`,
          [settling.map((row) => row.pid)],
        );
        const backends = ended.filter((row) => row.ok).length;
        if (backends === 0) return null;
        return {
          at: ended[0].at,
          instanceIds: [...new Set(settling.map((row) => row.app))],
          backends,
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return null;
  } finally {
    await blocker.query('ROLLBACK').catch(() => undefined);
    await blocker.end().catch(() => undefined);
  }
}
