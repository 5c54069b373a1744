import type pino from 'pino';
import { startEmbeddedPostgres } from '../../../../src/database/embedded-postgres';

/**
 * What a stop did to the database: stopped by this process, left alone (not
 * ours: DATABASE_URL), found gone already, or not down within the timeout.
 */
export type DatabaseStop = 'stopped' | 'not-ours' | 'already-stopped' | 'stop-timed-out';

/** The database the app runs on, and who owns its lifetime. */
export interface AppDatabase {
  readonly url: string;
  /** True when this process started the database, and so must stop it. */
  readonly embedded: boolean;
  /**
   * Stops an embedded database (once; later calls wait for the first), after
   * the app's pool is closed. No-op for DATABASE_URL.
   */
  stop(): Promise<DatabaseStop>;
  /**
   * Removes embedded-postgres' own SIGINT/SIGTERM handlers (async-exit-hook).
   * Call it when the app's own stop takes over: those handlers exit the
   * process the moment a signal arrives, while rows may still be in flight.
   */
  handOverSignals(): void;
}

const HANDED_OVER_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/**
 * A fast shutdown with no client left takes well under a second; past this the
 * process exits anyway, and the server's watchdog (postgres-own-session.ts)
 * finishes the stop when this process's end closes its pipe.
 */
const STOP_TIMEOUT_MS = 10_000;

/**
 * DATABASE_URL's database when given; otherwise a throw-away embedded
 * PostgreSQL, started here, whose data is deleted when it stops.
 */
export async function resolveAppDatabase(
  databaseUrl: string | null,
  log: pino.Logger,
): Promise<AppDatabase> {
  if (databaseUrl !== null) {
    const address = new URL(databaseUrl);
    // Host, port and name only: user, password and query options stay out of the log.
    log.info({
      msg: 'database-configured',
      event: 'database-configured',
      host: address.hostname,
      port: Number(address.port || 5432),
      database: decodeURIComponent(address.pathname.slice(1)),
    });
    return {
      url: databaseUrl,
      embedded: false,
      stop: () => Promise.resolve('not-ours'),
      handOverSignals: () => undefined,
    };
  }

  // The first start loads the embedded-postgres package, which installs process-wide exit
  // handlers. Which listeners appear is recorded so that exactly those can be handed over later.
  const before = new Map(
    HANDED_OVER_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]),
  );

  log.info({ msg: 'embedded-database-starting', event: 'embedded-database-starting' });
  const started = Date.now();
  const server = await startEmbeddedPostgres();
  const added = HANDED_OVER_SIGNALS.flatMap((signal) =>
    process
      .listeners(signal)
      .filter((listener) => !before.get(signal)?.has(listener))
      .map((listener) => ({ signal, listener })),
  );
  const address = new URL(server.url);
  log.info({
    msg: 'embedded-database-started',
    event: 'embedded-database-started',
    host: address.hostname,
    port: Number(address.port),
    database: address.pathname.slice(1),
    durationMs: Date.now() - started,
    // Staged: the checkout is out of the server user's reach, so it runs a copy under the temp dir.
    binaries: server.binaries.packageDir,
    stagedBinaries: server.binaries.staged,
    note: 'no DATABASE_URL: a throw-away PostgreSQL, deleted on exit',
  });

  let stopping: Promise<DatabaseStop> | null = null;
  const stop = async (): Promise<DatabaseStop> => {
    // The server runs out of the terminal's process group: only an outside kill stops it first.
    if (!server.running) {
      log.warn({
        msg: 'embedded-database-already-stopped',
        event: 'embedded-database-already-stopped',
        note: 'the embedded PostgreSQL exited before the app stopped it (killed from outside?)',
      });
      return 'already-stopped';
    }
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      server.stop().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS))),
    ]).finally(() => clearTimeout(timer));
    if (stopped) return 'stopped';
    log.warn({
      msg: 'embedded-database-stop-timed-out',
      event: 'embedded-database-stop-timed-out',
      timeoutMs: STOP_TIMEOUT_MS,
    });
    return 'stop-timed-out';
  };

  return {
    url: server.url,
    embedded: true,
    stop: () => (stopping ??= stop()),
    handOverSignals: () => {
      for (const { signal, listener } of added) process.removeListener(signal, listener);
    },
  };
}
