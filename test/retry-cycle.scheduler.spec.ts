import { SchedulerRegistry } from '@nestjs/schedule';
import type { DataSource } from 'typeorm';
import { waitFor } from './support/deferred';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
} from './support/fixtures';
import { createRetryTestApp } from './support/retry-test-app';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

describe('retry cycle schedule (@nestjs/schedule, real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    await insertChannel(ds, { key: 'email' });
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('runs cycles on the cron schedule and stops with the application', async () => {
    const app = await createRetryTestApp({
      url: db.url,
      options: { enabled: true, cron: '* * * * * *' },
    });
    let closed = false;
    try {
      const registry = app.module.get(SchedulerRegistry);
      expect(registry.getCronJobs().has('notifications-retry-cycle')).toBe(true);
      const id = await insertNotification(ds, {
        status: 'Failed',
        nextAttemptAt: minutesAgo(app.clock.now(), 1),
      });

      await waitFor(() => app.provider.calls.length > 0, 5_000);
      await waitFor(() => app.logs.events('cycle-completed').length > 0, 5_000);
      expect((await readNotification(ds, id)).status).toBe('Sent');

      await app.close();
      closed = true;
      expect(registry.getCronJobs().has('notifications-retry-cycle')).toBe(false);
      const completedBefore = app.logs.events('cycle-completed').length;
      await new Promise((r) => setTimeout(r, 1_500));
      expect(app.logs.events('cycle-completed')).toHaveLength(completedBefore);
    } finally {
      if (!closed) await app.close();
    }
  });

  it('registers no job when the worker is disabled', async () => {
    const app = await createRetryTestApp({ url: db.url, options: { enabled: false } });
    try {
      expect(app.module.get(SchedulerRegistry).getCronJobs().size).toBe(0);
      expect(app.logs.events('retry-worker-disabled')).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});
