import { SchedulerRegistry } from '@nestjs/schedule';
import { waitFor } from './support/deferred';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
} from './support/fixtures';
import { useRetryDatabase } from './support/retry-test-app';

describe('retry cycle schedule (@nestjs/schedule, real PostgreSQL)', () => {
  const t = useRetryDatabase();

  beforeAll(async () => {
    await insertChannel(t.ds, { key: 'email' });
  });

  it('runs cycles on the cron schedule and stops with the application', async () => {
    const app = await t.start({ options: { enabled: true, cron: '* * * * * *' } });
    const registry = app.module.get(SchedulerRegistry);
    expect(registry.getCronJobs().has('notifications-retry-cycle')).toBe(true);
    const id = await insertNotification(t.ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });

    await waitFor(() => app.provider.calls.length > 0, 5_000);
    await waitFor(() => app.logs.events('cycle-completed').length > 0, 5_000);
    expect((await readNotification(t.ds, id)).status).toBe('Sent');

    // The test is about closing: it closes the app itself (the harness then finds it closed).
    await app.close();
    expect(registry.getCronJobs().has('notifications-retry-cycle')).toBe(false);
    const completedBefore = app.logs.events('cycle-completed').length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(app.logs.events('cycle-completed')).toHaveLength(completedBefore);
  });

  it('registers no job when the worker is disabled', async () => {
    const app = await t.start({ options: { enabled: false } });
    expect(app.module.get(SchedulerRegistry).getCronJobs().size).toBe(0);
    expect(app.logs.events('retry-worker-disabled')).toHaveLength(1);
  });
});
