import { Client } from 'pg';
import { Registry } from 'prom-client';
import {
  RetryMetricName as M,
  RetryWorkerHealthIndicator,
  type RetryWorkerHealth,
} from '@pin/notifications-retry';
import { parsePrometheusText } from './support/prometheus-text';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

// The shortest schedule cron has: staleness is three seconds, so the tests see it happen.
const EVERY_SECOND = '* * * * * *';
const STALE_MULTIPLE = 3;
const STALE_AFTER_MS = 1_000 * STALE_MULTIPLE;
// The default lockKey: every instance of the fleet shares it.
const DEFAULT_LOCK_KEY = 'notifications:retry-worker';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * /health across instances (DESIGN §5): every instance reads the last
 * completed cycle from the lease row, so a lease nobody can take turns health
 * down everywhere, and only completed cycles move the last-cycle metric.
 * Two instances run the real schedule (every second) against one database.
 */
describe('observability: health across instances (real PostgreSQL, the schedule running)', () => {
  const t = useRetryDatabase();
  const registries = new Map<string, Registry>();
  let admin: Client;

  /** An instance on the schedule; the harness closes it (after the test that started it, if one did). */
  async function startInstance(
    instanceId: string,
    options: { enabled?: boolean; cron?: string } = {},
  ): Promise<RetryTestApp> {
    const registry = new Registry();
    registries.set(instanceId, registry);
    return t.start({
      clock: 'database',
      options: {
        enabled: true,
        cron: EVERY_SECOND,
        healthStaleMultiple: STALE_MULTIPLE,
        instanceId,
        metrics: { registry },
        ...options,
      },
    });
  }

  async function metric(instanceId: string, name: string): Promise<number> {
    return parsePrometheusText(await registries.get(instanceId)!.metrics()).value(name);
  }

  async function record(): Promise<{ at: Date | null; by: string | null }> {
    const { rows } = await admin.query<{ at: Date | null; by: string | null }>(
      `SELECT last_completed_at AS at, last_completed_by AS by FROM distributed_locks WHERE key = $1`,
      [DEFAULT_LOCK_KEY],
    );
    return rows[0] ?? { at: null, by: null };
  }

  /** Hands the lease to an owner that never completes a cycle; undone by `expireGhost`. */
  async function ghostTakesLease(): Promise<void> {
    await admin.query(
      `UPDATE distributed_locks
          SET owner = 'ghost', fencing_token = fencing_token + 1, acquired_at = now(),
              expires_at = now() + interval '1 hour'
        WHERE key = $1`,
      [DEFAULT_LOCK_KEY],
    );
  }

  async function expireGhost(): Promise<void> {
    await admin.query(
      `UPDATE distributed_locks SET expires_at = now() WHERE key = $1 AND owner = 'ghost'`,
      [DEFAULT_LOCK_KEY],
    );
  }

  let a: RetryTestApp;
  let b: RetryTestApp;

  beforeAll(async () => {
    a = await startInstance('instance-a');
    b = await startInstance('instance-b');
    admin = new Client({ connectionString: t.db.url });
    await admin.connect();
    t.teardown(() => admin.end());
    await until(async () => ((await record()).at ? true : undefined), 10_000);
  });

  afterEach(async () => {
    await expireGhost();
    // Every instance up again before the next test: a completed cycle recorded recently.
    await until(
      async () =>
        ((await a.workerHealth.health()).healthy && (await b.workerHealth.health()).healthy) ||
        undefined,
      10_000,
    );
  });

  it('is up on every instance while one of them completes cycles, the record naming it', async () => {
    // Longer than staleAfterMs: the instances keep recording completed cycles.
    await sleep(STALE_AFTER_MS + 1_000);
    const stored = await record();

    for (const app of [a, b]) {
      const health = await app.workerHealth.health();
      expect(health).toMatchObject({ healthy: true, enabled: true, staleAfterMs: STALE_AFTER_MS });
      expect(health).not.toHaveProperty('reason');
      expect(['instance-a', 'instance-b']).toContain(health.lastCompletedBy);
      expect(health.lastCompletedAt!.getTime()).toBeGreaterThanOrEqual(stored.at!.getTime());
    }
  });

  it('goes down on every instance within healthStaleMultiple intervals while a stuck session keeps the lease row locked, and the last-cycle metric stops', async () => {
    const stuck = new Client({ connectionString: t.db.url });
    await stuck.connect();
    try {
      await stuck.query('BEGIN');
      await stuck.query(`SELECT key FROM distributed_locks WHERE key = $1 FOR UPDATE`, [
        DEFAULT_LOCK_KEY,
      ]);
      const lockedAt = Date.now();
      const skippedBefore =
        (await metric('instance-a', M.leaseSkipped)) + (await metric('instance-b', M.leaseSkipped));

      const down = await until(async () => {
        const started = Date.now();
        const views = await Promise.all([a.workerHealth.health(), b.workerHealth.health()]);
        // A plain read: the lock the stuck session holds never makes health wait.
        expect(Date.now() - started).toBeLessThan(1_500);
        return views.every((view) => !view.healthy) ? views : undefined;
      }, 15_000);

      expect(Date.now() - lockedAt).toBeLessThan(STALE_AFTER_MS + 3_000);
      for (const view of down) {
        expect(view.reason).toMatch(
          new RegExp(
            `^no instance has completed a cycle for more than ${STALE_AFTER_MS} ms \\(last .+ by instance-[ab]\\)$`,
          ),
        );
      }
      const indicator = await a.module.get(RetryWorkerHealthIndicator).check('retryWorker');
      expect(indicator.retryWorker).toMatchObject({ status: 'down', reason: down[0].reason });

      // Ticks go on and skip, and none of them moves the last-cycle metric.
      const stamps = [
        await metric('instance-a', M.lastCycleTimestamp),
        await metric('instance-b', M.lastCycleTimestamp),
      ];
      await sleep(1_500);
      expect([
        await metric('instance-a', M.lastCycleTimestamp),
        await metric('instance-b', M.lastCycleTimestamp),
      ]).toEqual(stamps);
      expect(
        (await metric('instance-a', M.leaseSkipped)) + (await metric('instance-b', M.leaseSkipped)),
      ).toBeGreaterThan(skippedBefore);
    } finally {
      await stuck.query('ROLLBACK');
      await stuck.end();
    }
  });

  it('goes down on every instance when the lease is held by an owner that never completes a cycle', async () => {
    await ghostTakesLease();

    const down = await until(async () => {
      const views = await Promise.all([a.workerHealth.health(), b.workerHealth.health()]);
      return views.every((view) => !view.healthy) ? views : undefined;
    }, 15_000);

    for (const view of down) {
      // This instance's own ticks are on time: they find the lease held. That is not enough.
      expect(view).toMatchObject({
        lastCycleStatus: 'lease-held',
        lastCompletedBy: expect.stringMatching(/^instance-[ab]$/),
      });
      expect(Date.now() - view.lastCycleAt!.getTime()).toBeLessThan(STALE_AFTER_MS);
      expect(view.reason).toMatch(
        new RegExp(`^no instance has completed a cycle for more than ${STALE_AFTER_MS} ms`),
      );
    }
  });

  it('gives a fresh instance staleAfterMs from its start, then reports it down like the others', async () => {
    await ghostTakesLease();
    await until(async () => ((await a.workerHealth.health()).healthy ? undefined : true), 15_000);

    const fresh = await startInstance('instance-c');
    const atStart = await fresh.workerHealth.health();
    expect(atStart).toMatchObject({
      healthy: true,
      lastCompletedBy: expect.stringMatching(/^instance-[ab]$/),
    });
    expect(atStart).not.toHaveProperty('reason');

    const later = await until(async () => {
      const view = await fresh.workerHealth.health();
      return view.healthy ? undefined : view;
    }, 15_000);
    expect(later.reason).toMatch(
      new RegExp(`^no instance has completed a cycle for more than ${STALE_AFTER_MS} ms`),
    );
  });

  it('stays up where the worker is off, showing the last completed cycle and that it is stale', async () => {
    const off = await startInstance('instance-off', { enabled: false, cron: '0 * * * * *' });
    await ghostTakesLease();
    await admin.query(
      `UPDATE distributed_locks SET last_completed_at = now() - interval '1 hour' WHERE key = $1`,
      [DEFAULT_LOCK_KEY],
    );
    const stored = await record();

    const health: RetryWorkerHealth = await off.workerHealth.health();

    expect(health).toEqual({
      healthy: true,
      enabled: false,
      lastCompletedAt: stored.at,
      lastCompletedBy: stored.by,
      lastCycleAt: null,
      lastCycleStatus: null,
      // The default schedule: every minute, times healthStaleMultiple.
      staleAfterMs: 60_000 * STALE_MULTIPLE,
      failedBacklog: null,
      misconfiguredChannels: [],
      pausedChannels: [],
      reason: `worker disabled on this instance; no instance has completed a cycle for more than ${60_000 * STALE_MULTIPLE} ms (last ${stored.at!.toISOString()} by ${stored.by})`,
    });
  });

  it('answers within a second, down and saying why, while the read of the record hangs, and one read waits at most', async () => {
    const locker = new Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE distributed_locks IN ACCESS EXCLUSIVE MODE');

      const started = Date.now();
      const views = await Promise.all([
        a.workerHealth.health(),
        a.workerHealth.health(),
        a.workerHealth.health(),
      ]);

      expect(Date.now() - started).toBeLessThan(1_500);
      for (const view of views) {
        expect(view).toMatchObject({
          healthy: false,
          reason:
            'cannot read the last completed cycle from the database: Error: the read of the last completed cycle did not answer within 1000 ms',
        });
      }
      // A probe every few seconds must not take a pooled connection each while the read hangs.
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND query LIKE '%last_completed_by%' AND query NOT LIKE '%UPDATE%'`,
      );
      expect(rows[0].n).toBe(1);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});
