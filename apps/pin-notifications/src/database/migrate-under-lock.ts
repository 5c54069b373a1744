import { Logger } from '@nestjs/common';
import { DataSource, type DataSourceOptions } from 'typeorm';

/**
 * Key of the session-level `pg_advisory_lock` every replica of this app takes
 * around its migrations. Fixed, because replicas must agree on it: the first
 * 8 bytes of sha256("pin-notifications:migrations") as a signed bigint, so it
 * is unlikely to collide with another module's advisory locks in the same
 * database. Never change it while old and new versions may run side by side.
 */
export const MIGRATIONS_ADVISORY_LOCK_KEY = '-3880814726715039087';

/** How long a replica waits for another one's migrations before its start fails. */
export const MIGRATIONS_LOCK_TIMEOUT_MS = 5 * 60_000;

export interface MigrationRun {
  /** Names of the migrations this process applied; empty when another replica already had. */
  readonly applied: readonly string[];
  /** Time spent waiting for the lock. */
  readonly waitedMs: number;
}

/**
 * Runs the pending migrations while holding the advisory lock, on a connection
 * of its own kept for the whole run. TypeORM takes no lock of its own: replicas
 * starting together would each see the migration pending and run it, and all
 * but one fail on "relation already exists" (or worse, half-apply a
 * non-transactional one). Under the lock the second replica finds nothing
 * pending. The lock is session-level, so a replica that dies mid-migration
 * releases it with its connection.
 */
export async function runMigrationsUnderLock(
  dataSource: DataSource,
  logger: Pick<Logger, 'log'> = new Logger('Migrations'),
): Promise<MigrationRun> {
  const session = dataSource.createQueryRunner();
  await session.connect();
  try {
    const started = Date.now();
    // lock_timeout bounds the wait for an advisory lock too; reset before the session goes back to the pool.
    await session.query(`SELECT set_config('lock_timeout', $1, false)`, [
      `${MIGRATIONS_LOCK_TIMEOUT_MS}ms`,
    ]);
    await session.query(`SELECT pg_advisory_lock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
    const waitedMs = Date.now() - started;
    try {
      const applied = (await dataSource.runMigrations({ transaction: 'all' })).map((m) => m.name);
      logger.log({
        msg: 'migrations-applied',
        event: 'migrations-applied',
        applied,
        count: applied.length,
        lockWaitedMs: waitedMs,
      });
      return { applied, waitedMs };
    } finally {
      await session.query(`SELECT pg_advisory_unlock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
    }
  } finally {
    await session.query(`RESET lock_timeout`).catch(() => undefined);
    await session.release();
  }
}

/**
 * The host's DataSource: connected, then migrated under the lock. A failed
 * migration closes the pool before the error propagates, so a failed start
 * leaves no connection behind.
 */
export async function createMigratedDataSource(
  options: DataSourceOptions,
  logger?: Pick<Logger, 'log'>,
): Promise<DataSource> {
  const dataSource = await new DataSource({ ...options, migrationsRun: false }).initialize();
  try {
    await runMigrationsUnderLock(dataSource, logger);
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    throw error;
  }
  return dataSource;
}
