import { NotificationRepository } from '@pin/notifications-retry/persistence/notification.repository';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
  resetTables,
} from './support/fixtures';
import { completed } from './support/cycle-reports';
import { createRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { createTestDatabase, type TestDatabase } from './support/test-database';

describe('drain mode claims ahead (real PostgreSQL)', () => {
  let db: TestDatabase;
  let app: RetryTestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await createRetryTestApp({
      url: db.url,
      options: { batchSize: 2, concurrency: 2, drain: true },
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  beforeEach(async () => {
    await resetTables(app.dataSource);
    await insertChannel(app.dataSource, { key: 'email' });
  });

  it('claims the next batch while the last rows are in flight, leaving those rows out', async () => {
    const now = app.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(
        await insertNotification(app.dataSource, {
          status: 'Failed',
          attempts: 1,
          nextAttemptAt: minutesAgo(now, 10 - i),
        }),
      );
    }
    let inFlight = 0;
    let peak = 0;
    app.provider.respondWith(async (message) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    // Both rows of a batch are in flight when the next claim runs: were they not left out of it,
    // the claim would come back with nothing new and the drain would stop after one batch.
    expect(report).toMatchObject({
      stopReason: 'no-more-due',
      counts: { processed: 6, skipped: 0 },
    });
    expect(new Set(app.provider.calls.map((c) => c.message.id))).toEqual(new Set(ids));
    expect(app.provider.calls).toHaveLength(6);
    expect(peak).toBe(2);
  });

  it('lets the rows in flight finish before the cycle fails when claiming ahead fails', async () => {
    const now = app.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        await insertNotification(app.dataSource, {
          status: 'Failed',
          attempts: 1,
          nextAttemptAt: minutesAgo(now, 10 - i),
        }),
      );
    }
    // The claim ahead runs when the first row is done; the second is still at its provider then.
    app.provider.respondWith(async (message) => {
      await new Promise((resolve) => setTimeout(resolve, message.id === ids[0] ? 20 : 300));
      return { providerMessageId: `p-${message.id}` };
    });
    const claimAhead = jest
      .spyOn(NotificationRepository.prototype, 'findDueCandidates')
      .mockRejectedValueOnce(new Error('connection pool exhausted'));
    try {
      await expect(app.cycles.runCycle()).rejects.toThrow('connection pool exhausted');
    } finally {
      claimAhead.mockRestore();
    }

    // The claim failed while the first batch was in flight; the cycle ended only after both rows
    // committed, and released the lease after them.
    expect(ids.map((id) => app.provider.callsFor(id))).toEqual([1, 1, 0, 0]);
    for (const id of ids.slice(0, 2)) {
      expect((await readNotification(app.dataSource, id)).status).toBe('Sent');
    }
    const [lease] = await app.dataSource.query(
      `SELECT expires_at <= now() AS released FROM distributed_locks`,
    );
    expect(lease).toEqual({ released: true });
  });
});
