import { Clock, SystemClock } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  readNotification,
  resetTables,
} from './support/fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

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
  const t = useRetryDatabase();

  afterEach(() => {
    jest.restoreAllMocks();
    jest.useRealTimers();
  });

  /** An app on the library's own DatabaseClock, or on a host's Clock class. */
  async function startApp(clock?: new () => Clock): Promise<RetryTestApp> {
    return t.start({ clock: 'database', extensions: clock ? { clock } : undefined });
  }

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

  /** The whole wall clock ahead (`new Date()` too), timers and performance.now() untouched. */
  function skewWallClock(): void {
    jest.useFakeTimers({
      now: Date.now() + AHEAD_MS,
      advanceTimers: true,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
  }

  function skewProcessClock(): void {
    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + AHEAD_MS);
  }

  it('does not send a quiet-hours row early when the app clock runs 5 min ahead (default clock)', async () => {
    const app = await startApp();
    const { id } = await quietHoursRow(app);
    skewProcessClock();

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.processed).toBe(0);
    expect(app.provider.calls).toHaveLength(0);
    expect((await readNotification(app.dataSource, id)).status).toBe('Pending');
  });

  it('counts backoff from the database clock too: next attempt = database now + backoff', async () => {
    const app = await startApp();
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
    const app = await startApp(AppServerClock);
    const { id } = await quietHoursRow(app);
    skewProcessClock();

    completed(await app.cycles.runCycle());

    expect(app.provider.calls.map((call) => call.message.id)).toEqual([id]);
  });

  it('a host that registers the exported SystemClock gets database time: no quiet-hours row goes out early', async () => {
    const app = await startApp(SystemClock);
    const { id } = await quietHoursRow(app);
    skewWallClock();

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.processed).toBe(0);
    expect((await readNotification(app.dataSource, id)).status).toBe('Pending');
  });

  /** A row another worker holds: its claim has 30 s left by the database's clock. */
  async function rowClaimedElsewhere(app: RetryTestApp): Promise<string> {
    await resetTables(app.dataSource);
    await insertChannel(app.dataSource, { key: 'email' });
    const id = await insertNotification(app.dataSource, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: new Date(Date.now() - 60_000),
    });
    await app.dataSource.query(
      `UPDATE notifications
          SET claim_token = gen_random_uuid(), claim_expires_at = statement_timestamp() + interval '30 seconds'
        WHERE id = $1`,
      [id],
    );
    return id;
  }

  it('never takes a live claim when the cycle is given a now 5 min ahead of the database', async () => {
    const app = await startApp();
    const id = await rowClaimedElsewhere(app);

    const report = completed(await app.cycles.runCycle({ now: new Date(Date.now() + AHEAD_MS) }));

    expect(app.provider.calls).toHaveLength(0);
    expect(report.counts.processed).toBe(0);
    expect((await readNotification(app.dataSource, id)).status).toBe('Failed');
  });

  it('never takes a live claim when the host clock runs 5 min ahead (a custom Clock)', async () => {
    const app = await startApp(AppServerClock);
    const id = await rowClaimedElsewhere(app);
    skewProcessClock();

    completed(await app.cycles.runCycle());

    expect(app.provider.calls.map((call) => call.message.id)).not.toContain(id);
  });

  /**
   * DESIGN §3.1: the worker's time is the database's at the acquire plus
   * monotonic time since. The machine's wall clock steps during a failing call
   * (NTP, a VM resumed): the backoff is still counted from the database's now.
   */
  it.each([
    ['back', -10 * 60_000],
    ['forward', 10 * 60_000],
  ])('a wall-clock step of 10 min %s during a failing call moves no backoff', async (_, stepMs) => {
    const app = await startApp();
    const { id, databaseNow } = await quietHoursRow(app);
    await app.dataSource.query(
      `UPDATE notifications SET status = 'Failed', next_attempt_at = $2, scheduled_at = NULL WHERE id = $1`,
      [id, new Date(databaseNow.getTime() - 1_000)],
    );
    const realNow = Date.now.bind(Date);
    app.provider.respondWith(() => {
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + stepMs);
      throw new Error('provider down');
    });

    completed(await app.cycles.runCycle());
    jest.restoreAllMocks();

    const row = await readNotification(app.dataSource, id);
    const delayMs = row.next_attempt_at!.getTime() - databaseNow.getTime();
    expect(delayMs).toBeGreaterThanOrEqual(60_000);
    expect(delayMs).toBeLessThan(60_000 + 30_000);
    // Not due again at once: a second cycle calls nothing.
    completed(await app.cycles.runCycle());
    expect(app.provider.calls).toHaveLength(1);
  });
});
