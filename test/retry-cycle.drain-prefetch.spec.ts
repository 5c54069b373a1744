import { insertChannel, insertNotification, minutesAgo, resetTables } from './support/fixtures';
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
});
