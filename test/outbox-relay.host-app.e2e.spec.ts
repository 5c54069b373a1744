import { randomUUID } from 'node:crypto';
import {
  RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
  type ResolvedNotificationsRetryOptions,
} from '@pin/notifications-retry';
import { parseAppConfig } from '../apps/pin-notifications/src/config/app-config';
import { insertChannel, insertNotification, minutesAgo } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import {
  addStream,
  consumeStream,
  startNatsServer,
  type RunningNatsServer,
} from './support/nats-server';
import { eventually, insertOutboxEvents, outboxRows } from './support/outbox-fixtures';
import { scrapeMetrics } from './support/prometheus-text';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/** The host app with NATS_URL set: the relay runs with the built-in NATS JetStream publisher. */
describe('host app with NATS configured', () => {
  let db: TestDatabase;
  let nats: RunningNatsServer;
  let host: HostTestApp;

  beforeAll(async () => {
    const migrated = await createMigratedDatabase();
    db = migrated.db;
    await migrated.dataSource.destroy();
    nats = await startNatsServer();
    await addStream(nats.url, 'PIN_NOTIFICATIONS', ['pin.>']);
    const config = parseAppConfig({
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      NATS_SUBJECT_PREFIX: 'pin',
      NATS_STREAM: 'PIN_NOTIFICATIONS',
      OUTBOX_RETENTION_DAYS: '3',
      RETRY_WORKER_ENABLED: 'false',
    });
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: config.retryWorker,
      outboxRelay: config.outboxRelay,
    });
  });

  afterAll(async () => {
    await host?.close();
    await nats?.stop();
    await db?.drop();
  });

  it("publishes a cycle's final event to the configured stream and shows the relay metrics", async () => {
    await insertChannel(host.dataSource, { key: 'in_app', providerKey: 'in_app' });
    const id = await insertNotification(host.dataSource, {
      channel: 'in_app',
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(new Date(), 1),
    });
    const [direct] = await insertOutboxEvents(host.dataSource, [{ key: randomUUID() }]);

    await host.cycles.runCycle();

    await eventually('both events published', async () => {
      const rows = await outboxRows(host.dataSource);
      return rows.length === 2 && rows.every((row) => row.published_at !== null);
    });
    const messages = await consumeStream(nats.url, 'PIN_NOTIFICATIONS');
    expect(messages.map((m) => m.subject)).toEqual([
      'pin.pin.notifications.dispatched.v1',
      'pin.pin.notifications.dispatched.v1',
    ]);
    expect(messages.map((m) => m.msgId)).toContain(direct);
    expect(messages.map((m) => (m.payload as { notificationId: string }).notificationId)).toContain(
      id,
    );
    const scrape = await scrapeMetrics(host.baseUrl);
    expect(JSON.stringify(scrape)).toContain('notifications_outbox_published_total');
    const started = host.logEntries().find((entry) => entry.event === 'outbox-relay-started');
    expect(started).toMatchObject({ batchSize: 100 });
    const options = host.app.get<ResolvedNotificationsRetryOptions>(
      RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
    );
    expect(options.outboxRelay).toMatchObject({ enabled: true, retentionMs: 3 * 86_400_000 });
  });
});
