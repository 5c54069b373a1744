import {
  DataSource,
  type DataSourceOptions,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';
import {
  notificationsRetryMigrations,
  createMigratedDataSource,
  MigrationLockTimeoutError,
  MIGRATIONS_ADVISORY_LOCK_KEY,
  runMigrationsUnderLock,
} from '@pin/notifications-retry';
import { isRetryableDataSourceError } from '../apps/pin-notifications/src/database/retryable-start-error';
import { typeOrmOptions } from '../apps/pin-notifications/src/database/typeorm-options';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/** What a probe migration saw of its own session. */
interface SessionView {
  pid: number;
  holdsMigrationsLock: boolean;
  /** Whether the runner had opened a transaction around the migration. */
  inTransaction?: boolean;
}

async function viewSession(queryRunner: QueryRunner): Promise<SessionView> {
  const [view]: SessionView[] = await queryRunner.query(
    `SELECT pg_backend_pid() AS pid,
            EXISTS (SELECT 1 FROM pg_locks
                     WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()
                       AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1::bigint)
              AS "holdsMigrationsLock"`,
    [MIGRATIONS_ADVISORY_LOCK_KEY],
  );
  return view;
}

/** Migrations that record the session they run on, before and after the library's. */
function probeMigrations(seen: SessionView[]): Array<new () => MigrationInterface> {
  class ProbeBeforeAll1000000000000 implements MigrationInterface {
    readonly name = 'ProbeBeforeAll1000000000000';
    async up(queryRunner: QueryRunner): Promise<void> {
      seen.push(await viewSession(queryRunner));
    }
    async down(): Promise<void> {}
  }
  class ProbeAfterAll9000000000000 implements MigrationInterface {
    readonly name = 'ProbeAfterAll9000000000000';
    async up(queryRunner: QueryRunner): Promise<void> {
      seen.push({
        ...(await viewSession(queryRunner)),
        inTransaction: queryRunner.isTransactionActive,
      });
    }
    async down(): Promise<void> {}
  }
  return [ProbeBeforeAll1000000000000, ProbeAfterAll9000000000000];
}

/** Records what runMigrationsUnderLock logs. */
function recordingLogger(): { entries: Array<Record<string, unknown>>; log(entry: unknown): void } {
  const entries: Array<Record<string, unknown>> = [];
  return { entries, log: (entry: unknown) => void entries.push(entry as Record<string, unknown>) };
}

/**
 * Replicas of the host starting together on a fresh database: TypeORM takes no
 * lock around migrations, so the host runs them itself under a PostgreSQL
 * advisory lock (libs/notifications-retry/src/persistence/migrate-under-lock.ts, exported).
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
    // Once the replica is queued on the lock (however long its connect took on a loaded machine),
    // keep it waiting a known time.
    await waitUntil(async () => {
      const [{ waiting: queued }] = await holder.query(
        `SELECT count(*)::int AS waiting FROM pg_locks
          WHERE locktype = 'advisory' AND NOT granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      return queued > 0;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(started).toBe(false);

    await session.query(`SELECT pg_advisory_unlock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
    await session.release();
    await late;

    const [entry] = waiting.entries;
    expect(entry).toMatchObject({ event: 'migrations-applied', applied: [], count: 0 });
    expect(entry.lockWaitedMs).toBeGreaterThanOrEqual(300);
  });

  it('runs every migration on the session that holds the advisory lock, which it keeps until the last one has finished', async () => {
    const seen: SessionView[] = [];
    const ds = await createMigratedDataSource(
      { ...hostOptions(), migrations: [...notificationsRetryMigrations, ...probeMigrations(seen)] },
      recordingLogger(),
    );
    opened.push(ds);

    // The first probe ran before the library's migrations and the other after them, on one session.
    expect(seen).toHaveLength(2);
    expect(seen.map((view) => view.holdsMigrationsLock)).toEqual([true, true]);
    expect(new Set(seen.map((view) => view.pid)).size).toBe(1);
    // Each migration in a transaction of its own.
    expect(seen.map((view) => view.inTransaction)).toEqual([undefined, true]);
    const [{ held }] = await ds.query(
      `SELECT count(*)::int AS held FROM pg_locks WHERE locktype = 'advisory'`,
    );
    expect(held).toBe(0);
  });

  it('fails a start whose wait for the lock times out, with an error the TypeORM module does not retry', async () => {
    const holder = await createMigratedDataSource(hostOptions(), recordingLogger());
    opened.push(holder);
    const session = holder.createQueryRunner();
    await session.connect();
    await session.query(`SELECT pg_advisory_lock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
    try {
      const started = Date.now();
      const error = await createMigratedDataSource(hostOptions(), recordingLogger(), {
        lockTimeoutMs: 300,
      }).then(
        (ds) => {
          opened.push(ds);
          throw new Error('started without the lock');
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MigrationLockTimeoutError);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(isRetryableDataSourceError(error)).toBe(false);
    } finally {
      await session.query(`SELECT pg_advisory_unlock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
      await session.release();
    }
  });

  it('retries a database it cannot reach, but not a migration that fails', async () => {
    const unreachable = new URL(db.url);
    unreachable.port = '1';
    const connectError = await new DataSource({
      ...hostOptions(),
      url: unreachable.toString(),
    } as DataSourceOptions)
      .initialize()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isRetryableDataSourceError(connectError)).toBe(true);

    class Broken1999999999999 implements MigrationInterface {
      readonly name = 'Broken1999999999999';
      async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE no_such_table ADD COLUMN x int`);
      }
      async down(): Promise<void> {}
    }
    const migrationError = await createMigratedDataSource(
      { ...hostOptions(), migrations: [...notificationsRetryMigrations, Broken1999999999999] },
      recordingLogger(),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(migrationError).toMatchObject({ code: '42P01' });
    expect(isRetryableDataSourceError(migrationError)).toBe(false);
  });

  it('closes the session instead of pooling it when the unlock fails, and throws the migration error, not the unlock error', async () => {
    let migrationPid = 0;
    class LeavesAbortedTransaction1999999999999 implements MigrationInterface {
      readonly name = 'LeavesAbortedTransaction1999999999999';
      readonly transaction = false;
      async up(queryRunner: QueryRunner): Promise<void> {
        [{ pid: migrationPid }] = await queryRunner.query(`SELECT pg_backend_pid() AS pid`);
        // A transaction the runner does not know of, aborted: every later query on the session fails.
        await queryRunner.query(`BEGIN`);
        await queryRunner.query(`SELECT 1 / 0`);
      }
      async down(): Promise<void> {}
    }
    const ds = await new DataSource({
      ...hostOptions(),
      migrations: [...notificationsRetryMigrations, LeavesAbortedTransaction1999999999999],
    }).initialize();
    opened.push(ds);
    const logger = recordingLogger();

    await expect(runMigrationsUnderLock(ds, logger)).rejects.toMatchObject({ code: '22012' }); // division_by_zero
    expect(logger.entries).toEqual([
      expect.objectContaining({ event: 'migrations-unlock-failed' }),
    ]);
    expect(migrationPid).toBeGreaterThan(0);

    // Its backend is gone (taking the lock with it) rather than idle in the pool.
    const deadline = Date.now() + 5_000;
    let alive = 1;
    while (alive > 0 && Date.now() < deadline) {
      [{ alive }] = await ds.query(
        `SELECT count(*)::int AS alive FROM pg_stat_activity WHERE pid = $1`,
        [migrationPid],
      );
      if (alive > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(alive).toBe(0);
    const [{ free }] = await ds.query(`SELECT pg_try_advisory_lock($1::bigint) AS free`, [
      MIGRATIONS_ADVISORY_LOCK_KEY,
    ]);
    expect(free).toBe(true);
    await ds.query(`SELECT pg_advisory_unlock_all()`);
  });
});

/** Polls `check` until it holds, or fails after `timeoutMs`. */
async function waitUntil(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
