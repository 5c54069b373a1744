import {
  DistributedLock,
  RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
  RetriableDeliveryError,
  type ResolvedNotificationsRetryOptions,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { DatabaseAvailability } from './support/database-availability';
import { insertChannel, insertNotification, minutesAgo, minutesLater } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { createRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { scriptedAdapterFor, type ScriptedAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const MailerAdapter = scriptedAdapterFor('mailer');

// Once a year, at New Year UTC: enabled, yet it will not fire while the tests run.
const YEARLY = '0 0 0 1 1 *';
// The longest gap among the next runs of YEARLY always spans a leap year.
const LEAP_YEAR_MS = 366 * 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;

interface HealthBody {
  status: string;
  info?: Record<string, Record<string, unknown>>;
  error?: Record<string, Record<string, unknown>>;
  details: Record<string, Record<string, unknown>>;
}

/** Moves wall-clock time (Date only: timers, I/O and performance.now() stay real). */
function fakeWallClockAt(at: number): void {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
  jest.setSystemTime(at);
}

/**
 * GET /health of the host app (Terminus): the database ping and the worker's
 * own verdict, over HTTP, against real PostgreSQL that the test takes away and
 * gives back.
 */
describe('observability: /health of the host app', () => {
  let db: TestDatabase;
  let host: HostTestApp;
  let mailer: ScriptedAdapter;
  let options: ResolvedNotificationsRetryOptions;
  let availability: DatabaseAvailability;

  beforeAll(async () => {
    db = await createTestDatabase();
    availability = new DatabaseAvailability(db.name);
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: {
        enabled: true,
        cron: YEARLY,
        healthStaleMultiple: 2,
        concurrency: 2,
        instanceId: 'health-test-instance',
      },
      adapters: [MailerAdapter],
    });
    mailer = host.app.get(MailerAdapter);
    options = host.app.get(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  afterAll(async () => {
    jest.useRealTimers();
    await availability?.restore().catch(() => undefined);
    await host?.close();
    await db?.drop();
  });

  async function health(): Promise<{ status: number; body: HealthBody }> {
    const response = await fetch(`${host.baseUrl}/health`);
    return { status: response.status, body: (await response.json()) as HealthBody };
  }

  async function failedBacklogFromSql(): Promise<number> {
    const [{ n }]: Array<{ n: number }> = await host.dataSource.query(
      `SELECT count(*)::int AS n FROM notifications WHERE status = 'Failed' AND next_attempt_at IS NOT NULL`,
    );
    return n;
  }

  it('judges staleness by the schedule: the longest gap of the cron times healthStaleMultiple', () => {
    expect(options.scheduleIntervalMs).toBe(LEAP_YEAR_MS);
    expect(host.cycles.health().staleAfterMs).toBe(2 * LEAP_YEAR_MS);
  });

  it('answers 200 with the database and the worker up on a fresh instance, before any cycle', async () => {
    const { status, body } = await health();

    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'ok',
      info: {
        database: { status: 'up' },
        retryWorker: {
          status: 'up',
          enabled: true,
          lastCycleAt: null,
          lastCycleStatus: null,
          staleAfterMs: 2 * LEAP_YEAR_MS,
          failedBacklog: null,
          misconfiguredChannels: [],
          pausedChannels: [],
        },
      },
      error: {},
      details: body.info,
    });
  });

  it('answers 503 with the worker down and a reason once no cycle ran for longer than staleAfterMs', async () => {
    fakeWallClockAt(Date.now() + 2 * LEAP_YEAR_MS + DAY_MS);

    const { status, body } = await health();

    expect(status).toBe(503);
    expect(body.status).toBe('error');
    expect(body.info).toEqual({ database: { status: 'up' } });
    expect(body.error).toEqual({
      retryWorker: {
        status: 'down',
        enabled: true,
        lastCycleAt: null,
        lastCycleStatus: null,
        staleAfterMs: 2 * LEAP_YEAR_MS,
        failedBacklog: null,
        misconfiguredChannels: [],
        pausedChannels: [],
        reason: `no cycle for more than ${2 * LEAP_YEAR_MS} ms`,
      },
    });

    // Back to the real time: the same instance is healthy again.
    jest.useRealTimers();
    expect((await health()).status).toBe(200);
  });

  describe('after a completed cycle', () => {
    let lastCycleAt: Date;

    beforeAll(async () => {
      await insertChannel(host.dataSource, { key: 'email', providerKey: 'mailer', maxAttempts: 3 });
      const now = new Date();
      const sent = await insertNotification(host.dataSource, {
        status: 'Failed',
        nextAttemptAt: minutesAgo(now, 10),
      });
      for (const minutes of [9, 8]) {
        await insertNotification(host.dataSource, {
          status: 'Failed',
          nextAttemptAt: minutesAgo(now, minutes),
        });
      }
      await insertNotification(host.dataSource, {
        status: 'Failed',
        nextAttemptAt: minutesLater(now, 30),
      });
      mailer.respondWith((message) => {
        if (message.id === sent) return { providerMessageId: `pm-${message.id}` };
        throw new RetriableDeliveryError('http_503');
      });
      const before = Date.now();
      const report = completed(await host.cycles.runCycle());
      expect(report.counts).toMatchObject({ sent: 1, retried: 2 });
      lastCycleAt = host.cycles.health().lastCycleAt!;
      expect(lastCycleAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(lastCycleAt.getTime()).toBeLessThanOrEqual(Date.now());
    });

    it('answers 200 with lastCycleStatus completed, the cycle time and the failed backlog', async () => {
      const backlog = await failedBacklogFromSql();
      expect(backlog).toBe(3);

      const { status, body } = await health();

      expect(status).toBe(200);
      expect(body.info?.retryWorker).toEqual({
        status: 'up',
        enabled: true,
        lastCycleAt: lastCycleAt.toISOString(),
        lastCycleStatus: 'completed',
        staleAfterMs: 2 * LEAP_YEAR_MS,
        failedBacklog: backlog,
        misconfiguredChannels: [],
        pausedChannels: [],
      });
    });

    it('stays up until staleAfterMs after that cycle, and goes down just past it', async () => {
      fakeWallClockAt(lastCycleAt.getTime() + 2 * LEAP_YEAR_MS - 1_000);
      expect((await health()).status).toBe(200);

      jest.setSystemTime(lastCycleAt.getTime() + 2 * LEAP_YEAR_MS + 1_000);
      const { status, body } = await health();

      expect(status).toBe(503);
      expect(body.error?.retryWorker).toMatchObject({
        status: 'down',
        lastCycleAt: lastCycleAt.toISOString(),
        lastCycleStatus: 'completed',
        reason: `no cycle for more than ${2 * LEAP_YEAR_MS} ms`,
      });
      expect(body.info?.database).toEqual({ status: 'up' });
    });

    it('counts a tick skipped for another instance’s lease as a cycle on time', async () => {
      const lock = host.app.get(DistributedLock);
      const held = await lock.acquire(options.lockKey, 'another-instance', 60_000);
      expect(held).not.toBeNull();
      try {
        const report = await host.cycles.runCycle();
        expect(report).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });
      } finally {
        await lock.release(held!);
      }

      const { status, body } = await health();

      expect(status).toBe(200);
      expect(body.info?.retryWorker).toMatchObject({
        status: 'up',
        lastCycleStatus: 'lease-held',
        // As of the last completed cycle: a skipped tick counts nothing.
        failedBacklog: 3,
        misconfiguredChannels: [],
        pausedChannels: [],
      });
      const skippedAt = new Date(String(body.info?.retryWorker.lastCycleAt)).getTime();
      expect(skippedAt).toBeGreaterThan(lastCycleAt.getTime());
    });
  });

  describe('when the database becomes unreachable', () => {
    afterAll(async () => {
      await availability.restore();
    });

    it('answers 503 with the database down, and 200 again once it is back (the pool reconnects)', async () => {
      expect((await health()).status).toBe(200);
      expect(await availability.sessions()).toBeGreaterThan(0);

      await availability.cutOff();
      expect(await availability.sessions()).toBe(0);
      const down = await health();

      expect(down.status).toBe(503);
      expect(down.body.status).toBe('error');
      expect(down.body.error?.database).toMatchObject({ status: 'down' });
      // The worker itself is still on schedule: only the database is reported down.
      expect(down.body.info?.retryWorker).toMatchObject({ status: 'up' });

      await availability.restore();
      const deadline = Date.now() + 10_000;
      let again = await health();
      while (again.status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        again = await health();
      }
      expect(again.status).toBe(200);
      expect(again.body.info?.database).toEqual({ status: 'up' });
    });
  });

  describe('RetryCycleService.health(now) itself', () => {
    let disabled: RetryTestApp;

    beforeAll(async () => {
      disabled = await createRetryTestApp({ url: db.url, options: { enabled: false } });
    });

    afterAll(async () => {
      await disabled?.close();
    });

    it('is healthy with enabled false where the worker is off, however long without a cycle', () => {
      const health = disabled.cycles.health(new Date(Date.now() + 10 * LEAP_YEAR_MS));

      expect(health).toEqual({
        healthy: true,
        enabled: false,
        lastCycleAt: null,
        lastCycleStatus: null,
        // The default schedule: every minute, three intervals.
        staleAfterMs: 3 * 60_000,
        failedBacklog: null,
        misconfiguredChannels: [],
        pausedChannels: [],
        reason: 'worker disabled on this instance',
      });
    });

    it('is stale past staleAfterMs after the last cycle, healthy up to it', () => {
      const { lastCycleAt, staleAfterMs } = host.cycles.health();
      expect(lastCycleAt).not.toBeNull();
      const at = (offsetMs: number) => new Date(lastCycleAt!.getTime() + staleAfterMs + offsetMs);

      expect(host.cycles.health(at(0))).toMatchObject({ healthy: true, enabled: true });
      expect(host.cycles.health(at(0))).not.toHaveProperty('reason');
      expect(host.cycles.health(at(1))).toEqual({
        healthy: false,
        enabled: true,
        lastCycleAt,
        lastCycleStatus: 'lease-held',
        staleAfterMs,
        failedBacklog: 3,
        misconfiguredChannels: [],
        pausedChannels: [],
        reason: `no cycle for more than ${staleAfterMs} ms`,
      });
    });

    it('gives a fresh enabled instance the same allowance from its start', async () => {
      const fresh = await createRetryTestApp({
        url: db.url,
        options: { enabled: true, cron: YEARLY, lockKey: 'health-unit-test' },
        adapters: [MailerAdapter],
      });
      try {
        const { staleAfterMs } = fresh.cycles.health();
        expect(staleAfterMs).toBe(3 * LEAP_YEAR_MS);
        expect(fresh.cycles.health(new Date())).toMatchObject({
          healthy: true,
          lastCycleAt: null,
        });
        expect(fresh.cycles.health(new Date(Date.now() + staleAfterMs + 60_000))).toMatchObject({
          healthy: false,
          enabled: true,
          lastCycleAt: null,
          lastCycleStatus: null,
          reason: `no cycle for more than ${staleAfterMs} ms`,
        });
      } finally {
        await fresh.close();
      }
    });
  });
});
