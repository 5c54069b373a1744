import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { typeOrmOptions } from '../apps/pin-notifications/src/database/typeorm-options';
import { completed } from './support/cycle-reports';
import { insertChannel, minutesAgo } from './support/fixtures';
import { startPgBouncer, type RunningPgBouncer } from './support/pgbouncer';
import { useRetryDatabase, useRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { testServerUrl } from './support/test-server';

// Hundreds of row transactions through a pooler on a machine others load too.
jest.setTimeout(180_000);

const ROWS = 320;

/** Inserts `count` due Failed rows of channel `email` in one statement; returns their ids. */
async function insertDueRows(ds: DataSource, count: number, now: Date): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await ds.query(
    `INSERT INTO notifications (id, channel, recipient_address, subject, body, status, attempts, next_attempt_at)
     SELECT id, 'email', 'person-' || left(id::text, 8) || '@example.com', 'Your statement is ready',
            'Hello, your statement is ready.', 'Failed', 1, $2
       FROM unnest($1::uuid[]) AS id`,
    [ids, minutesAgo(now, 5)],
  );
  return ids;
}

async function statusCounts(ds: DataSource): Promise<Record<string, number>> {
  const rows: Array<{ status: string; rows: number }> = await ds.query(
    `SELECT status, count(*)::int AS rows FROM notifications GROUP BY status`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.rows]));
}

/** Cycles until one processes nothing, or `max` cycles ran. */
async function runCyclesUntilIdle(app: RetryTestApp, max: number): Promise<number> {
  let cycles = 0;
  while (cycles < max) {
    cycles++;
    const report = completed(await app.cycles.runCycle());
    if (report.counts.processed === 0 && report.counts.errors === 0) break;
  }
  return cycles;
}

/**
 * PgBouncer (Debian's 1.18, installed by .ci/run) in transaction mode in front
 * of the test server: a server connection serves one transaction at a time for
 * whichever client asks, so nothing may depend on session state, and named
 * prepared statements are not kept per client.
 */
describe('through PgBouncer in transaction mode (real PgBouncer, real PostgreSQL)', () => {
  // Migrations take a session-level advisory lock: they run on a direct connection, not a pooler.
  const database = useRetryDatabase();
  /** Straight to PostgreSQL: migrations, fixtures and inspection. */
  let direct: DataSource;
  let bouncer: RunningPgBouncer;

  beforeAll(async () => {
    direct = database.ds;
    bouncer = await startPgBouncer({ serverUrl: testServerUrl(), poolSize: 5 });
    database.teardown(() => bouncer.stop());
  });

  beforeEach(async () => {
    await direct.query(
      'TRUNCATE notifications, notification_channels, notification_outbox, distributed_locks',
    );
    await insertChannel(direct, { key: 'email', maxAttempts: 3 });
  });

  it("connects with the host app's TypeORM options (no startup parameter PgBouncer refuses)", async () => {
    const options = {
      ...(typeOrmOptions(bouncer.urlFor(database.db.url), 4) as DataSourceOptions),
      migrationsRun: false,
    } as DataSourceOptions;
    const ds = new DataSource(options);
    try {
      await ds.initialize();
      const [{ answer }] = await ds.query<Array<{ answer: number }>>('SELECT 40 + 2 AS answer');
      expect(answer).toBe(42);
    } finally {
      if (ds.isInitialized) await ds.destroy();
    }
  });

  describe('with the default options', () => {
    // One app through the pooler for these tests; the rows are the outer beforeEach's to arrange.
    const t = useRetryTestApp({
      database,
      url: (url) => bouncer.urlFor(url),
      poolSize: 10,
      reset: false,
    });
    let app: RetryTestApp;

    beforeAll(() => {
      ({ app } = t);
    });

    it(`delivers ${ROWS} rows at concurrency 4 without a failed statement, on unnamed statements`, async () => {
      const ids = await insertDueRows(direct, ROWS, app.clock.now());

      const cycles = await runCyclesUntilIdle(app, 10);

      const errors = [
        ...app.logs.events('item-error'),
        ...app.logs.events('item-outcome-unrecorded'),
      ];
      expect(errors.map((e) => e.error)).toEqual([]);
      expect(await statusCounts(direct)).toEqual({ Sent: ROWS });
      expect(new Set(app.provider.calls.map((c) => c.message.id))).toEqual(new Set(ids));
      expect(app.provider.calls).toHaveLength(ROWS);
      expect(cycles).toBeGreaterThanOrEqual(2); // 200 per batch by default
      // Detected once, and said why: the connection's backend key is PgBouncer's, not the server's.
      expect(app.logs.events('prepared-statements')).toEqual([
        expect.objectContaining({ named: false, reason: 'pooler-detected' }),
      ]);
    });

    it('holds no server connection during provider calls: nothing is ever idle in transaction', async () => {
      await insertDueRows(direct, 8, app.clock.now());
      app.provider.calls.length = 0;
      app.provider.respondWith(async (message) => {
        await new Promise((r) => setTimeout(r, 400));
        return { providerMessageId: `slow-${message.id}` };
      });
      const samples: number[] = [];
      const run = app.cycles.runCycle();
      for (let i = 0; i < 6; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const [{ idle, active }] = await direct.query<Array<{ idle: number; active: number }>>(
          `SELECT count(*) FILTER (WHERE state = 'idle in transaction')::int AS idle,
                  count(*) FILTER (WHERE state = 'active' AND pid <> pg_backend_pid())::int AS active
             FROM pg_stat_activity WHERE datname = current_database()`,
        );
        samples.push(idle + active);
      }
      expect(completed(await run).counts).toMatchObject({ sent: 8, errors: 0 });
      expect(app.provider.calls).toHaveLength(8);
      // Sampled while the eight calls were in flight: no backend busy or parked for the worker.
      expect(samples).toEqual([0, 0, 0, 0, 0, 0]);
      app.provider.respondWith((message) => ({ providerMessageId: `scripted-${message.id}` }));
    });
  });

  describe('with named statements forced on, behind a pool of one server connection', () => {
    let single: RunningPgBouncer;
    let app: RetryTestApp;

    // Before the harness starts the app on it; stopped once the harness has closed the app.
    beforeAll(async () => {
      single = await startPgBouncer({ serverUrl: testServerUrl(), poolSize: 1 });
    });
    const t = useRetryTestApp({
      database,
      url: (url) => single.urlFor(url),
      poolSize: 10,
      options: { preparedStatements: true, concurrency: 2 },
      reset: false,
    });
    t.teardown(() => single?.stop());

    beforeAll(() => {
      ({ app } = t);
    });

    it('switches to unnamed statements at the first prepared-statement error, once, and sends that statement again unnamed', async () => {
      await insertDueRows(direct, 1, app.clock.now());
      // One client prepares the cycle's statements on the one server connection.
      expect(completed(await app.cycles.runCycle()).counts).toMatchObject({ sent: 1, errors: 0 });
      await insertDueRows(direct, 7, app.clock.now());

      // Hold that client: the next cycle runs on another one, whose PARSE of a name the first
      // already prepared there fails (42P05), or whose BIND finds no statement (26000). Either way
      // the statement never ran, so it goes again unnamed and nothing fails.
      const pool = (app.dataSource.driver as unknown as { master: Pool }).master;
      const held = await pool.connect();
      let first: ReturnType<typeof completed>;
      try {
        first = completed(await app.cycles.runCycle());
      } finally {
        held.release();
      }
      expect(first.counts.errors).toBe(0);
      const switches = app.logs
        .events('prepared-statements')
        .filter((e) => e.reason === 'statement-error');
      expect(switches).toEqual([
        expect.objectContaining({
          named: false,
          reason: 'statement-error',
          sqlState: expect.stringMatching(/^(26000|42P05)$/),
        }),
      ]);

      await runCyclesUntilIdle(app, 5);
      expect(await statusCounts(direct)).toEqual({ Sent: 8 });
      // No statement failed, and the switch was logged only once.
      expect(app.logs.events('item-error')).toHaveLength(0);
      expect(
        app.logs.events('prepared-statements').filter((e) => e.reason === 'statement-error'),
      ).toHaveLength(1);
    });
  });
});
