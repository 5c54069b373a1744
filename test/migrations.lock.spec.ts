import type { DataSource, DataSourceOptions } from 'typeorm';
import { notificationsRetryMigrations } from '@pin/notifications-retry';
import {
  createMigratedDataSource,
  MIGRATIONS_ADVISORY_LOCK_KEY,
} from '../apps/pin-notifications/src/database/migrate-under-lock';
import { typeOrmOptions } from '../apps/pin-notifications/src/database/typeorm-options';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/** Records what runMigrationsUnderLock logs. */
function recordingLogger(): { entries: Array<Record<string, unknown>>; log(entry: unknown): void } {
  const entries: Array<Record<string, unknown>> = [];
  return { entries, log: (entry: unknown) => void entries.push(entry as Record<string, unknown>) };
}

/**
 * Replicas of the host starting together on a fresh database: TypeORM takes no
 * lock around migrations, so the host runs them itself under a PostgreSQL
 * advisory lock (apps/pin-notifications/src/database/migrate-under-lock.ts).
 */
describe('host migrations under an advisory lock (real PostgreSQL)', () => {
  let db: TestDatabase;
  const opened: DataSource[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((ds) => ds.destroy().catch(() => undefined)));
    await db?.drop();
  });

  const hostOptions = (): DataSourceOptions =>
    ({ ...typeOrmOptions(db.url, 4), logger: undefined, logging: false }) as DataSourceOptions;

  it('leaves migrationsRun off in the TypeORM options: the lock, not TypeORM, decides when they run', () => {
    expect(typeOrmOptions(db.url, 4)).toMatchObject({ migrationsRun: false, synchronize: false });
  });

  it('two replicas starting at once on a fresh database both succeed, and the schema is created once', async () => {
    const first = recordingLogger();
    const second = recordingLogger();

    const results = await Promise.allSettled([
      createMigratedDataSource(hostOptions(), first),
      createMigratedDataSource(hostOptions(), second),
    ]);
    for (const result of results) if (result.status === 'fulfilled') opened.push(result.value);

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    const applied = [first, second].map(
      (logger) => logger.entries.find((e) => e.event === 'migrations-applied')?.applied,
    );
    const names = notificationsRetryMigrations.map(
      (migration) => (migration as unknown as { name: string }).name,
    );
    // One replica applied every migration; the other waited for the lock and found none pending.
    expect(applied).toEqual(expect.arrayContaining([names, []]));
    const ds = opened[0];
    const rows: Array<{ name: string }> = await ds.query(`SELECT name FROM migrations ORDER BY id`);
    expect(rows.map((r) => r.name)).toEqual(names.map(String));
    const [{ tables }] = await ds.query(
      `SELECT count(*)::int AS tables FROM pg_tables
        WHERE schemaname = 'public'
          AND tablename IN ('notifications', 'notification_channels', 'notification_outbox', 'distributed_locks')`,
    );
    expect(tables).toBe(4);
    // Released: nobody holds the lock once both are up.
    const [{ held }] = await ds.query(
      `SELECT count(*)::int AS held FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(held).toBe(0);
  });

  it('makes a replica wait while another holds the lock, then start with nothing left to run', async () => {
    const holder = await createMigratedDataSource(hostOptions(), recordingLogger());
    opened.push(holder);
    const session = holder.createQueryRunner();
    await session.connect();
    await session.query(`SELECT pg_advisory_lock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
    const waiting = recordingLogger();
    let started = false;
    const late = createMigratedDataSource(hostOptions(), waiting).then((ds) => {
      started = true;
      opened.push(ds);
      return ds;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(started).toBe(false);

    await session.query(`SELECT pg_advisory_unlock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
    await session.release();
    await late;

    const [entry] = waiting.entries;
    expect(entry).toMatchObject({ event: 'migrations-applied', applied: [], count: 0 });
    expect(entry.lockWaitedMs).toBeGreaterThanOrEqual(400);
  });
});
