import { Logger } from '@nestjs/common';
import { DataSource, MigrationExecutor, type DataSourceOptions, type QueryRunner } from 'typeorm';
import { MigrationLockTimeoutError } from '../errors/migration-lock-timeout.error';

/**
 * Key of the session-level `pg_advisory_lock` every replica of this app takes
 * around its migrations. Fixed, because replicas must agree on it: the first
 * 8 bytes of sha256("pin-notifications:migrations") as a signed bigint, so it
 * is unlikely to collide with another module's advisory locks in the same
 * database. Never change it while old and new versions may run side by side.
 */
export const MIGRATIONS_ADVISORY_LOCK_KEY = '-3880814726715039087';

/**
 * How long a replica waits for the advisory lock (another replica's migrations)
 * before its start fails with MigrationLockTimeoutError. The TypeORM module does
 * not retry that error (isRetryableDataSourceError), so this is the whole wait.
 */
export const MIGRATIONS_LOCK_TIMEOUT_MS = 5 * 60_000;

/**
 * Once the advisory lock is held: how long one migration statement may wait
 * for a table or row lock before the start fails. A queued ALTER TABLE blocks
 * every later query on its table while it waits, so it must not wait for long.
 * A migration may set a shorter one of its own (SET LOCAL).
 */
export const MIGRATION_STATEMENT_LOCK_TIMEOUT_MS = 10_000;

export interface MigrationRun {
  /** Names of the migrations this process applied; empty when another replica already had. */
  readonly applied: readonly string[];
  /** Time spent waiting for the lock. */
  readonly waitedMs: number;
}

export interface MigrationRunSettings {
  /** Wait for the advisory lock; MIGRATIONS_LOCK_TIMEOUT_MS unless given (tests). */
  readonly lockTimeoutMs?: number;
}

export type MigrationLogger = Pick<Logger, 'log'> & Partial<Pick<Logger, 'warn'>>;

/**
 * Runs the pending migrations on one session that holds the advisory lock for
 * the whole run. TypeORM takes no lock of its own: replicas starting together
 * would each see a migration pending and run it, and all but one fail on
 * "relation already exists" (or worse, half-apply a non-transactional one).
 * Under the lock the second replica finds nothing pending.
 *
 * The migrations run on the very session that holds the lock (TypeORM's
 * MigrationExecutor on its QueryRunner), so the lock cannot be lost while they
 * go on: should that session drop, the migration in progress drops with it and
 * rolls back. Each migration runs in its own transaction (`'each'`), under
 * MIGRATION_STATEMENT_LOCK_TIMEOUT_MS.
 *
 * The session goes back to the pool only after a clean run and unlock; after
 * anything else it is closed, which also releases a lock still held. An unlock
 * failure never hides the migration's own error.
 */
export async function runMigrationsUnderLock(
  dataSource: DataSource,
  logger: MigrationLogger = new Logger('Migrations'),
  settings: MigrationRunSettings = {},
): Promise<MigrationRun> {
  const lockTimeoutMs = settings.lockTimeoutMs ?? MIGRATIONS_LOCK_TIMEOUT_MS;
  const session = dataSource.createQueryRunner();
  let client: PgClient | undefined;
  let reusable = false;
  try {
    client = (await session.connect()) as PgClient;
    const started = Date.now();
    await setLockTimeout(session, lockTimeoutMs);
    await acquireLock(session, lockTimeoutMs);
    const waitedMs = Date.now() - started;

    let outcome: { applied: string[] } | { error: unknown };
    try {
      await setLockTimeout(session, MIGRATION_STATEMENT_LOCK_TIMEOUT_MS);
      const executor = new MigrationExecutor(dataSource, session);
      executor.transaction = 'each';
      outcome = { applied: (await executor.executePendingMigrations()).map((m) => m.name) };
    } catch (error) {
      outcome = { error };
    }
    const unlocked = await releaseLock(session, logger);
    if ('error' in outcome) throw outcome.error;

    const { applied } = outcome;
    logger.log({
      msg: 'migrations-applied',
      event: 'migrations-applied',
      applied,
      count: applied.length,
      lockWaitedMs: waitedMs,
    });
    reusable =
      unlocked &&
      (await session.query(`RESET lock_timeout`).then(
        () => true,
        () => false,
      ));
    return { applied, waitedMs };
  } finally {
    if (reusable) await session.release();
    else await discard(session, client);
  }
}

/**
 * The host's DataSource: connected, then migrated under the lock. A failed
 * migration closes the pool before the error propagates, so a failed start
 * leaves no connection behind.
 */
export async function createMigratedDataSource(
  options: DataSourceOptions,
  logger?: MigrationLogger,
  settings?: MigrationRunSettings,
): Promise<DataSource> {
  const dataSource = await new DataSource({ ...options, migrationsRun: false }).initialize();
  try {
    await runMigrationsUnderLock(dataSource, logger, settings);
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    throw error;
  }
  return dataSource;
}

function setLockTimeout(session: QueryRunner, ms: number): Promise<unknown> {
  // Session-level (is_local false): it must outlive the migrations' transactions; reset before release.
  return session.query(`SELECT set_config('lock_timeout', $1, false)`, [`${ms}ms`]);
}

async function acquireLock(session: QueryRunner, lockTimeoutMs: number): Promise<void> {
  try {
    await session.query(`SELECT pg_advisory_lock($1::bigint)`, [MIGRATIONS_ADVISORY_LOCK_KEY]);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '55P03') throw error; // lock_not_available
    throw new MigrationLockTimeoutError(
      `Waited ${lockTimeoutMs} ms for the migrations advisory lock (key ${MIGRATIONS_ADVISORY_LOCK_KEY}): ` +
        `another replica is still migrating, or a session holds the lock. Nothing was migrated.`,
      { cause: error },
    );
  }
}

/** True when the lock was released and the session is fit for the pool; never throws. */
async function releaseLock(session: QueryRunner, logger: MigrationLogger): Promise<boolean> {
  try {
    const [{ unlocked }] = (await session.query(
      `SELECT pg_advisory_unlock($1::bigint) AS unlocked`,
      [MIGRATIONS_ADVISORY_LOCK_KEY],
    )) as Array<{ unlocked: boolean }>;
    if (unlocked) return true;
    warn(logger, { reason: 'the session no longer held the lock' });
  } catch (error) {
    warn(logger, { reason: error instanceof Error ? error.message : String(error) });
  }
  return false;
}

function warn(logger: MigrationLogger, detail: { reason: string }): void {
  const entry = {
    msg: 'migrations-unlock-failed',
    event: 'migrations-unlock-failed',
    ...detail,
    note: 'the session is closed instead of returned to the pool, which releases the lock',
  };
  if (logger.warn) logger.warn(entry);
  else logger.log(entry);
}

/** Closes the session's connection (releasing any lock it holds) and removes it from the pool. */
async function discard(session: QueryRunner, client: PgClient | undefined): Promise<void> {
  // pg-pool drops a released client that is ending instead of handing it out again.
  await client?.end().catch(() => undefined);
  await session.release().catch(() => undefined);
}

/** The part of pg's PoolClient used here: what `QueryRunner.connect()` resolves to on PostgreSQL. */
interface PgClient {
  end(): Promise<void>;
}
