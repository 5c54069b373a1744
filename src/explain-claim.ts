/**
 * `npm run explain:claim [-- --rows 200000]`: loads a realistic table into a
 * scratch database and prints EXPLAIN ANALYZE of the SQL the claim really sends.
 * Uses DATABASE_URL's server when set (creating and dropping its own database
 * there), otherwise an embedded PostgreSQL.
 */
import { DataSource } from 'typeorm';
import {
  notificationsRetryEntities,
  notificationsRetryMigrations,
} from '../libs/notifications-retry/src';
import { explainClaimQueries } from './claim-plan/explain-claim-queries';
import { loadClaimFixture } from './claim-plan/load-claim-fixture';
import { startEmbeddedPostgres, type RunningPostgres } from './database/embedded-postgres';
import { createScratchDatabase } from './database/scratch-database';

async function main(): Promise<void> {
  const rowsFlag = process.argv.indexOf('--rows');
  const rows = rowsFlag > 0 ? Number(process.argv[rowsFlag + 1]) : 200_000;
  if (!Number.isInteger(rows) || rows < 100)
    throw new Error(`--rows must be an integer ≥ 100, got ${process.argv[rowsFlag + 1]}`);

  let embedded: RunningPostgres | undefined;
  const serverUrl = process.env.DATABASE_URL ?? (embedded = await startEmbeddedPostgres()).url;
  const db = await createScratchDatabase(serverUrl, 'claim_explain');
  const dataSource = new DataSource({
    type: 'postgres',
    url: db.url,
    entities: notificationsRetryEntities,
    migrations: notificationsRetryMigrations,
    migrationsRun: true,
  });
  try {
    await dataSource.initialize();
    const [{ version }]: Array<{ version: string }> = await dataSource.query(
      `SELECT current_setting('server_version') AS version`,
    );
    const loadStarted = Date.now();
    const now = await loadClaimFixture(dataSource, { rows });
    console.log(
      `PostgreSQL ${version}; ${rows} rows loaded in ${Date.now() - loadStarted} ms (${embedded ? 'embedded' : 'DATABASE_URL'} server)\n`,
    );
    for (const query of await explainClaimQueries(dataSource, now, ['email'], 200)) {
      console.log(`== ${query.name}: ${query.executionMs} ms\n${query.sql}\n\n${query.plan}\n`);
    }
  } finally {
    await dataSource.destroy().catch(() => undefined);
    await db.drop();
    await embedded?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
