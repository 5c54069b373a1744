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
import { scriptedAdapterFor, type ScriptedAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const MailerAdapter = scriptedAdapterFor('mailer');

// Once a year, at New Year UTC: enabled, yet it will not fire while the tests run.
const YEARLY = '0 0 0 1 1 *';
// The longest gap among the next runs of YEARLY always spans a leap year.
const LEAP_YEAR_MS = 366 * 24 * 3_600_000;

interface HealthBody {
  status: string;
  info?: Record<string, Record<string, unknown>>;
  error?: Record<string, Record<string, unknown>>;
  details: Record<string, Record<string, unknown>>;
}

/**
 * GET /health of the host app (Terminus): the database ping and the worker's
 * verdict (read from the lease row), over HTTP, against real PostgreSQL that
 * the test takes away and gives back. Staleness across instances, with the
 * schedule running: observability.health.instances.spec.ts.
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

  afterAll(async () => {
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

  async function lastCompletedFromSql(): Promise<{ at: Date | null; by: string | null }> {
    const [row]: Array<{ at: Date | null; by: string | null }> = await host.dataSource.query(
      `SELECT last_completed_at AS at, last_completed_by AS by FROM distributed_locks WHERE key = $1`,
      [options.lockKey],
    );
    return row ?? { at: null, by: null };
  }

  it('judges staleness by the schedule: the longest gap of the cron times healthStaleMultiple', async () => {
    expect(options.scheduleIntervalMs).toBe(LEAP_YEAR_MS);
    expect((await host.workerHealth.health()).staleAfterMs).toBe(2 * LEAP_YEAR_MS);
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
          lastCompletedAt: null,
          lastCompletedBy: null,
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

  describe('after a completed cycle', () => {
    let lastCycleAt: Date;
    let recorded: { at: Date | null; by: string | null };

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
      lastCycleAt = (await host.workerHealth.health()).lastCycleAt!;
      expect(lastCycleAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(lastCycleAt.getTime()).toBeLessThanOrEqual(Date.now());
      recorded = await lastCompletedFromSql();
    });

    it('records the completed cycle in the lease row, by the database clock, with the instance', async () => {
      const [{ now }]: Array<{ now: Date }> = await host.dataSource.query(`SELECT now()`);
      expect(recorded.by).toBe('health-test-instance');
      expect(recorded.at).toBeInstanceOf(Date);
      expect(now.getTime() - recorded.at!.getTime()).toBeGreaterThanOrEqual(0);
      expect(now.getTime() - recorded.at!.getTime()).toBeLessThan(60_000);
    });

    it('answers 200 with the recorded cycle, lastCycleStatus completed, the cycle time and the failed backlog', async () => {
      const backlog = await failedBacklogFromSql();
      expect(backlog).toBe(3);

      const { status, body } = await health();

      expect(status).toBe(200);
      expect(body.info?.retryWorker).toEqual({
        status: 'up',
        enabled: true,
        lastCompletedAt: recorded.at!.toISOString(),
        lastCompletedBy: 'health-test-instance',
        lastCycleAt: lastCycleAt.toISOString(),
        lastCycleStatus: 'completed',
        staleAfterMs: 2 * LEAP_YEAR_MS,
        failedBacklog: backlog,
        misconfiguredChannels: [],
        pausedChannels: [],
      });
    });

    it('records nothing for a tick skipped for another instance’s lease: up while the recorded cycle is recent', async () => {
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
        lastCompletedAt: recorded.at!.toISOString(),
        lastCompletedBy: 'health-test-instance',
        lastCycleStatus: 'lease-held',
        // As of the last completed cycle: a skipped tick counts nothing.
        failedBacklog: 3,
        misconfiguredChannels: [],
        pausedChannels: [],
      });
      const skippedAt = new Date(String(body.info?.retryWorker.lastCycleAt)).getTime();
      expect(skippedAt).toBeGreaterThan(lastCycleAt.getTime());
      expect(await lastCompletedFromSql()).toEqual(recorded);
    });
  });

  describe('when the database becomes unreachable', () => {
    afterAll(async () => {
      await availability.restore();
    });

    it('answers 503 with the database down and the worker down naming the database error, and 200 again once it is back (the pool reconnects)', async () => {
      expect((await health()).status).toBe(200);
      expect(await availability.sessions()).toBeGreaterThan(0);

      await availability.cutOff();
      expect(await availability.sessions()).toBe(0);
      const down = await health();

      expect(down.status).toBe(503);
      expect(down.body.status).toBe('error');
      expect(down.body.error?.database).toMatchObject({ status: 'down' });
      // Nobody can record a cycle now, and the reason says why rather than only "no cycle".
      expect(down.body.error?.retryWorker).toMatchObject({
        status: 'down',
        reason: expect.stringMatching(
          /^cannot read the last completed cycle from the database: .*not currently accepting connections/,
        ),
      });

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
});
