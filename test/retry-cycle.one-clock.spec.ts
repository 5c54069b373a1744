import { Clock } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  readNotification,
  resetTables,
} from './support/fixtures';
import { createRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const AHEAD_MS = 5 * 60_000;

/** An app server's clock as a host might hand it to the module: the process's own time. */
class AppServerClock extends Clock {
  now(): Date {
    return new Date(Date.now());
  }
}

/**
 * DESIGN §3.1: due checks and backoff are judged on the database's clock,
 * whatever the app servers' clocks say. Here the process's clock runs 5 min
 * ahead of PostgreSQL's (Date.now is skewed; timers and the database are not).
 */
describe('one clock: the database decides when a row is due (real PostgreSQL)', () => {
  let db: TestDatabase;
  let apps: RetryTestApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    for (const app of apps) await app.close();
    apps = [];
  });

  afterAll(async () => {
    await db?.drop();
  });

  async function quietHoursRow(app: RetryTestApp): Promise<{ id: string; databaseNow: Date }> {
    await resetTables(app.dataSource);
    await insertChannel(app.dataSource, {
      key: 'email',
      backoffKind: 'Fixed',
      backoffBaseMs: 60_000,
      backoffJitter: false,
    });
    const [{ now }] = await app.dataSource.query<Array<{ now: Date }>>('SELECT now()');
    // Quiet hours end in one minute, by the database's clock.
    const id = await insertNotification(app.dataSource, {
      status: 'Pending',
      scheduledAt: new Date(now.getTime() + 60_000),
    });
    return { id, databaseNow: now };
  }

  function skewProcessClock(): void {
    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + AHEAD_MS);
  }

  it('does not send a quiet-hours row early when the app clock runs 5 min ahead (default clock)', async () => {
    const app = await createRetryTestApp({ url: db.url, clock: 'database' });
    apps.push(app);
    const { id } = await quietHoursRow(app);
    skewProcessClock();

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.processed).toBe(0);
    expect(app.provider.calls).toHaveLength(0);
    expect((await readNotification(app.dataSource, id)).status).toBe('Pending');
  });

  it('counts backoff from the database clock too: next attempt = database now + backoff', async () => {
    const app = await createRetryTestApp({ url: db.url, clock: 'database' });
    apps.push(app);
    const { id, databaseNow } = await quietHoursRow(app);
    await app.dataSource.query(
      `UPDATE notifications SET status = 'Failed', next_attempt_at = $2, scheduled_at = NULL WHERE id = $1`,
      [id, new Date(databaseNow.getTime() - 1_000)],
    );
    app.provider.respondWith(() => {
      throw new Error('provider down');
    });
    skewProcessClock();

    completed(await app.cycles.runCycle());

    const row = await readNotification(app.dataSource, id);
    const delayMs = row.next_attempt_at!.getTime() - databaseNow.getTime();
    // 60 s of backoff from the database's now (the cycle ran within seconds), not 5 min more.
    expect(delayMs).toBeGreaterThanOrEqual(60_000);
    expect(delayMs).toBeLessThan(60_000 + 30_000);
  });

  it('with an app-server clock instead, the same row goes out 4 min early: what the default prevents', async () => {
    const app = await createRetryTestApp({
      url: db.url,
      clock: 'database',
      extensions: { clock: AppServerClock },
    });
    apps.push(app);
    const { id } = await quietHoursRow(app);
    skewProcessClock();

    completed(await app.cycles.runCycle());

    expect(app.provider.calls.map((call) => call.message.id)).toEqual([id]);
  });
});
