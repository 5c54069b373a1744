import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Logger } from 'nestjs-pino';
import type pino from 'pino';
import { DataSource } from 'typeorm';
import { RetryCycleService, type CompletedCycleReport } from '@pin/notifications-retry';
import { AppModule } from '../apps/pin-notifications/src/app.module';
import { createRootLogger } from '../apps/pin-notifications/src/logging/root-logger';
import { buildDemoNotifications } from '../src/demo/demo-notifications';
import { seedDemoData } from '../src/demo/seed-demo-data';
import { createTestDatabase, type TestDatabase } from './support/test-database';

interface NotificationState {
  id: string;
  channel: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  scheduled_at: Date | null;
  last_error_code: string | null;
  updated_at: Date;
}

/**
 * The host app as `main.ts` assembles it (minus the embedded database): real
 * PostgreSQL, migrations, demo seed, HTTP, the retry module's cycle.
 */
describe('pin-notifications host app', () => {
  const logLines: string[] = [];
  // Everything the app logs, as the JSON lines it would print.
  const logDestination: pino.DestinationStream = {
    write: (line: string) => void logLines.push(line),
  };
  let db: TestDatabase;
  let app: INestApplication;
  let dataSource: DataSource;
  let baseUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [
        AppModule.forRoot({
          databaseUrl: db.url,
          // Not the embedded database, so demo data only because it is asked for.
          demo: true,
          // No schedule: the test runs the cycle itself.
          retryWorker: { enabled: false, concurrency: 4 },
          logger: createRootLogger('info', logDestination),
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ bufferLogs: true });
    app.useLogger(app.get(Logger));
    await app.listen(0);
    baseUrl = `http://127.0.0.1:${new URL(await app.getUrl()).port}`;
    dataSource = app.get(DataSource);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const notifications = (): Promise<NotificationState[]> =>
    dataSource.query(
      `SELECT id, channel, status, attempts, next_attempt_at, scheduled_at, last_error_code, updated_at
         FROM notifications ORDER BY id`,
    );

  it('migrated the database and seeded the demo catalog and notifications at start', async () => {
    const channels: Array<{ key: string; is_enabled: boolean; provider_key: string }> =
      await dataSource.query(
        `SELECT key, is_enabled, provider_key FROM notification_channels ORDER BY key`,
      );
    expect(channels).toEqual([
      { key: 'email', is_enabled: true, provider_key: 'demo-flaky' },
      { key: 'in_app', is_enabled: true, provider_key: 'in_app' },
      { key: 'push', is_enabled: true, provider_key: 'stub-push' },
      { key: 'sms', is_enabled: false, provider_key: 'stub-sms' },
    ]);
    expect(await notifications()).toHaveLength(40);
    expect(logLines.some((line) => line.includes('"demo-data-seeded"'))).toBe(true);

    // Seeding again (a restart with SEED_DEMO_DATA=true) adds nothing.
    await expect(seedDemoData(dataSource)).resolves.toEqual({
      channelsInserted: 0,
      notificationsInserted: 0,
    });
    expect(await notifications()).toHaveLength(40);
  });

  it('answers GET /health with 200 and the database up', async () => {
    const response = await fetch(`${baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: 'ok',
      info: { database: { status: 'up' } },
    });
  });

  it('runs a retry cycle over the demo rows: sent, retried and terminal, one outbox event per final outcome', async () => {
    const before = new Map((await notifications()).map((row) => [row.id, row]));

    const report = await app.get(RetryCycleService).runCycle();

    expect(report.status).toBe('completed');
    const { counts, excludedChannels } = report as CompletedCycleReport;
    expect(counts.errors).toBe(0);
    expect(counts.sent).toBeGreaterThan(0);
    expect(counts.retried).toBeGreaterThan(0);
    expect(counts.terminal).toBeGreaterThan(0);
    expect(excludedChannels).toEqual([{ channel: 'sms', reason: 'disabled', dueRows: 5 }]);

    const after = await notifications();
    const changed = after.filter((row) => {
      const old = before.get(row.id);
      return (
        old?.status !== row.status ||
        old.attempts !== row.attempts ||
        old.updated_at.getTime() !== row.updated_at.getTime()
      );
    });
    expect(changed).toHaveLength(counts.processed);
    // Every channel with a provider delivered something, the push stub included.
    for (const channel of ['in_app', 'email', 'push']) {
      expect(changed.some((row) => row.channel === channel && row.status === 'Sent')).toBe(true);
    }
    // The disabled channel's rows wait untouched, and so do rows not due yet.
    expect(changed.some((row) => row.channel === 'sms')).toBe(false);
    expect(
      changed.some((row) => row.scheduled_at !== null && row.scheduled_at.getTime() > Date.now()),
    ).toBe(false);
    // The demo provider's non-retriable rejection is terminal at once.
    expect(after).toContainEqual(
      expect.objectContaining({
        channel: 'email',
        status: 'Failed',
        next_attempt_at: null,
        last_error_code: 'demo_recipient_rejected',
      }),
    );

    const outbox: Array<{ message_key: string; topic: string; status: string }> =
      await dataSource.query(
        `SELECT message_key, topic, payload->>'status' AS status FROM notification_outbox`,
      );
    expect(outbox).toHaveLength(counts.sent + counts.terminal);
    expect(outbox.every((event) => event.topic === 'pin.notifications.dispatched.v1')).toBe(true);
    expect(outbox.filter((event) => event.status === 'Sent')).toHaveLength(counts.sent);
    const sentIds = new Set(
      after
        .filter((row) => row.status === 'Sent' && before.get(row.id)?.status !== 'Sent')
        .map((row) => row.id),
    );
    expect(
      new Set(outbox.filter((event) => event.status === 'Sent').map((event) => event.message_key)),
    ).toEqual(sentIds);

    expect(logLines.some((line) => line.includes('"cycle-completed"'))).toBe(true);
  });

  it('never logs the demo recipients or contents', () => {
    const log = logLines.join('\n');
    for (const row of buildDemoNotifications(new Date())) {
      expect(log).not.toContain(row.recipientAddress);
      if (row.subject) expect(log).not.toContain(row.subject);
      expect(log).not.toContain(row.body);
    }
  });
});
