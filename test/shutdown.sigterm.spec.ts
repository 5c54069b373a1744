import type { DataSource } from 'typeorm';
import {
  insertChannel,
  insertNotification,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { startChildHost, type ChildHost } from './support/child-host';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

const SLOW_SEND_MS = 3_000;
/** The worker's default shutdownGraceMs: provider calls still running after it are cut. */
const SHUTDOWN_GRACE_MS = 10_000;
const APP_NAME = 'shutdown-sigterm-child';

/**
 * SIGTERM while a cycle is waiting on a slow provider: the host (a separate
 * process, started the way main.ts starts it) stops claiming, lets the rows in
 * flight finish and commit, releases the lease, closes its pool and exits 0
 * within the shutdown grace period.
 */
describe('shutdown: SIGTERM during a cycle with a slow provider (child process, real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let host: ChildHost | undefined;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
  });

  afterAll(async () => {
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
    await ds?.destroy();
    await db?.drop();
  });

  it('finishes the rows in flight, claims no more, releases the lease and exits 0 before the deadline', async () => {
    await insertChannel(ds, { key: 'email', providerKey: 'slow', timeoutMs: 15_000 });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(
        await insertNotification(ds, {
          status: 'Failed',
          attempts: 1,
          nextAttemptAt: new Date(Date.now() - (60 - i) * 60_000),
        }),
      );
    }

    host = startChildHost(db.url, {
      RETRY_CONCURRENCY: '2',
      SLOW_SEND_MS: String(SLOW_SEND_MS),
      PGAPPNAME: APP_NAME,
    });
    // Two rows in flight (concurrency 2), each held for SLOW_SEND_MS by the provider.
    await host.waitForLine(() => host!.events('slow-send-started').length >= 2, 45_000);
    const childSessions = async (): Promise<number> => {
      const [{ sessions }] = await ds.query(
        `SELECT count(*)::int AS sessions FROM pg_stat_activity WHERE application_name = $1`,
        [APP_NAME],
      );
      return sessions as number;
    };
    expect(await childSessions()).toBeGreaterThan(0);
    const sigtermAt = Date.now();
    host.child.kill('SIGTERM');
    const exit = await host.exited;

    expect(exit).toMatchObject({ code: 0, signal: null });
    // Waited for the calls in flight, yet well inside the grace period (the "deadline").
    expect(exit.at - sigtermAt).toBeLessThan(SHUTDOWN_GRACE_MS);

    const inFlight = host.events('slow-send-started').map((line) => line.id as string);
    expect(inFlight).toHaveLength(2);
    expect(host.events('slow-send-finished').map((line) => line.id)).toEqual(
      expect.arrayContaining(inFlight),
    );
    for (const id of inFlight) {
      expect(await readNotification(ds, id)).toMatchObject({
        status: 'Sent',
        attempts: 2,
        provider_message_id: `slow-${id}`,
      });
      expect(await outboxEvents(ds, id)).toHaveLength(1);
    }
    // Nothing claimed after the signal: the rest wait, untouched and due, for the next instance.
    for (const id of ids.filter((id) => !inFlight.includes(id))) {
      expect(await readNotification(ds, id)).toMatchObject({ status: 'Failed', attempts: 1 });
      expect(await outboxEvents(ds, id)).toHaveLength(0);
    }
    expect(host.events('cycle-completed')).toEqual([
      expect.objectContaining({ stopReason: 'cancelled', sent: 2 }),
    ]);

    // One line sums the stop up; the database is DATABASE_URL's, so it is left running.
    expect(host.events('app-stopped')).toEqual([
      expect.objectContaining({
        signal: 'SIGTERM',
        cycleInFlight: true,
        callsDrained: 2,
        callsCut: 0,
        rowsWritten: 2,
        lease: 'released',
        database: 'not-ours',
      }),
    ]);

    const [lease] = await ds.query(`SELECT expires_at <= now() AS released FROM distributed_locks`);
    expect(lease.released).toBe(true);
    // The pool is closed: no session of the child is left holding anything.
    expect(await childSessions()).toBe(0);
  }, 90_000);
});
