import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import {
  RetryCycleService,
  notificationsRetryMigrations,
  type CompletedCycleReport,
} from '@pin/notifications-retry';
import { FakeWebhookServer } from '@pin/notifications-retry/testing';
import { AppModule } from '../examples/getting-started/app.module';
import { outboxEvents } from './support/fixtures';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/** The README's getting-started files (its blocks are checked to equal them: check-docs-typescript). */
const EXAMPLE_DIR = join(__dirname, '..', 'examples', 'getting-started');
const exampleSql = (file: string): string => readFileSync(join(EXAMPLE_DIR, file), 'utf8');

const EXAMPLE_ENV = [
  'DATABASE_URL',
  'PORT',
  'ACME_EMAIL_URL',
  'ACME_EMAIL_TOKEN',
  'RETRY_WORKER_ENABLED',
  'RETRY_CRON',
  'RETRY_CONCURRENCY',
  'RETRY_BATCH_SIZE',
] as const;

interface SentRow {
  id: string;
  status: string;
  attempts: number;
  provider_message_id: string | null;
  sent_at: Date | null;
  claim_token: string | null;
}

/**
 * The README's module example as a team would start it (examples/getting-started/main.ts minus
 * `listen(3000)`): its own TypeORM root on a fresh database, migrations run by its
 * dataSourceFactory, TerminusModule and the health controller, its adapter against a real HTTP
 * server; then the README's channel and notification inserts, sent by one cycle.
 */
describe('README example app (examples/getting-started) on a real PostgreSQL', () => {
  const savedEnv = new Map<string, string | undefined>();
  let db: TestDatabase;
  let acme: FakeWebhookServer;
  let app: INestApplication;
  let dataSource: DataSource;
  let baseUrl: string;

  beforeAll(async () => {
    for (const name of EXAMPLE_ENV) savedEnv.set(name, process.env[name]);
    db = await createTestDatabase();
    acme = await FakeWebhookServer.start();
    Object.assign(process.env, {
      DATABASE_URL: db.url,
      ACME_EMAIL_URL: acme.url,
      ACME_EMAIL_TOKEN: 'example-token',
      // The worker on, as in production, but no scheduled tick while the test drives the cycle.
      RETRY_WORKER_ENABLED: 'true',
      RETRY_CRON: '0 0 0 1 1 *',
      RETRY_CONCURRENCY: '20',
      RETRY_BATCH_SIZE: '100',
    });
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    app.enableShutdownHooks();
    await app.listen(0, '127.0.0.1');
    baseUrl = await app.getUrl();
    dataSource = app.get(DataSource);
  });

  afterAll(async () => {
    await app?.close();
    await acme?.close();
    await db?.drop();
    for (const [name, value] of savedEnv) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('ran every migration of the library at start, under its dataSourceFactory', async () => {
    const ran: Array<{ name: string }> = await dataSource.query(
      'SELECT name FROM migrations ORDER BY id',
    );
    expect(ran.map((row) => row.name)).toEqual(
      notificationsRetryMigrations.map((migration) => migration.name),
    );
  });

  it('answers GET /health 200 with the database and the retry worker up', async () => {
    const response = await fetch(`${baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: 'ok',
      info: {
        database: { status: 'up' },
        retryWorker: { status: 'up', enabled: true, lastCompletedAt: null },
      },
    });
  });

  it('sends the README channel and notification rows through its adapter in one cycle', async () => {
    await dataSource.query(exampleSql('channel.sql'));
    await dataSource.query(exampleSql('notifications.sql'));
    const inserted: Array<{ id: string }> = await dataSource.query(
      'SELECT id FROM notifications ORDER BY created_at, id',
    );
    expect(inserted).toHaveLength(2);

    const report = await app.get(RetryCycleService).runCycle();

    expect(report.status).toBe('completed');
    expect((report as CompletedCycleReport).counts).toMatchObject({ sent: 2, errors: 0 });
    const rows: SentRow[] = await dataSource.query(
      `SELECT id, status, attempts, provider_message_id, sent_at, claim_token
         FROM notifications ORDER BY id`,
    );
    expect(rows.map((row) => row.status)).toEqual(['Sent', 'Sent']);
    expect(rows.every((row) => row.sent_at !== null && row.claim_token === null)).toBe(true);

    // Each row went to the Acme API once, keyed by its id, with the configured token.
    expect(acme.requests).toHaveLength(2);
    for (const row of rows) {
      const request = acme.requests.find((r) => r.headers['idempotency-key'] === row.id);
      expect(request?.headers.authorization).toBe('Bearer example-token');
      expect(row.provider_message_id).toMatch(/^fake-message-\d+$/);
    }
    const events = await outboxEvents(dataSource);
    expect(events.map((event) => event.payload.status)).toEqual(['Sent', 'Sent']);
    expect(new Set(events.map((event) => event.message_key))).toEqual(
      new Set(rows.map((row) => row.id)),
    );
  });

  it('reports the completed cycle in /health afterwards', async () => {
    const body = (await (await fetch(`${baseUrl}/health`)).json()) as {
      info: { retryWorker: { lastCompletedAt: string | null; lastCycleStatus: string } };
    };
    expect(body.info.retryWorker.lastCycleStatus).toBe('completed');
    expect(body.info.retryWorker.lastCompletedAt).not.toBeNull();
  });
});
