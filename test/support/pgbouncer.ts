import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../src/database/free-port';
import { installedBinary } from './installed-binary';

export interface PgBouncerOptions {
  /** The PostgreSQL server every database name is forwarded to (its user and password log in). */
  readonly serverUrl: string;
  /** Server connections per database and user: small, so client connections share them. */
  readonly poolSize: number;
  readonly poolMode?: 'session' | 'transaction' | 'statement';
}

export interface RunningPgBouncer {
  /** `databaseUrl` with host and port replaced by PgBouncer's. */
  urlFor(databaseUrl: string): string;
  readonly port: number;
  /** What PgBouncer logged: for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * The `pgbouncer` binary: on PATH, or where Debian's package puts it
 * (/usr/sbin, which a non-root PATH often lacks). `.ci/run` installs it.
 */
export function pgBouncerBinary(): string {
  return installedBinary(
    'pgbouncer',
    ['/usr/sbin', '/usr/local/sbin'],
    'pgbouncer is not installed: `apt-get install pgbouncer` (Debian; .ci/run installs it when missing)',
  );
}

/**
 * Starts a PgBouncer of its own on a free port, in front of `serverUrl`, with
 * PgBouncer's defaults except the pool mode and size. Its config, auth file and
 * log live in a fresh temp directory. PgBouncer refuses to run as root: as
 * root it runs as the `postgres` user (`-u`), which must read that directory.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<RunningPgBouncer> {
  const binary = pgBouncerBinary();
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const dir = await mkdtemp(join(tmpdir(), 'pin-pgbouncer-'));
  const asRoot = userInfo().uid === 0;
  let lastError: unknown;
  // A free port can be taken between the probe and PgBouncer's bind: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await findFreePort();
    await writeFile(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        // Any database name, forwarded to the same name on the server.
        `* = host=${server.hostname} port=${server.port || 5432}`,
        '',
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        // md5 needs a password to compare with; a server that asks for none (trust auth, as the
        // README allows) is fronted the same way: no client check, the user still listed.
        `auth_type = ${password === '' ? 'trust' : 'md5'}`,
        `auth_file = ${join(dir, 'userlist.txt')}`,
        `pool_mode = ${options.poolMode ?? 'transaction'}`,
        `default_pool_size = ${options.poolSize}`,
        'max_client_conn = 500',
        '',
      ].join('\n'),
    );
    // The server's password in plain text: PgBouncer needs it to log in to a `password`/scram server.
    await writeFile(join(dir, 'userlist.txt'), `${quote(user)} ${quote(password)}\n`);
    if (asRoot) {
      const [uid, gid] = ['-u', '-g'].map((flag) =>
        Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()),
      );
      await chmod(dir, 0o700);
      await chown(dir, uid, gid);
      for (const file of ['pgbouncer.ini', 'userlist.txt']) await chown(join(dir, file), uid, gid);
    }
    const child = spawn(
      binary,
      [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<string>((resolve) => {
      child.once('error', (error) => resolve(`could not run ${binary}: ${error.message}`));
      child.once('exit', (code, signal) => resolve(`exited (code ${code}, signal ${signal})`));
    });
    const started = await Promise.race([
      waitForPort(port, () => child.exitCode === null && child.signalCode === null),
      exited.then((why) => new Error(why)),
    ]);
    if (!(started instanceof Error)) {
      return running(child, exited, port, dir, () => output);
    }
    lastError = new Error(`pgbouncer did not start: ${started.message}\n${output}`);
    child.kill('SIGKILL');
    if (!/address already in use/i.test(output)) break;
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}

function running(
  child: ChildProcess,
  exited: Promise<string>,
  port: number,
  dir: string,
  log: () => string,
): RunningPgBouncer {
  let stopping: Promise<void> | null = null;
  return {
    port,
    urlFor: (databaseUrl) => {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    log,
    stop: () =>
      (stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          // SIGTERM: PgBouncer 1.18 shuts down at once, closing every connection.
          child.kill('SIGTERM');
          let timer: NodeJS.Timeout | undefined;
          const stopped = await Promise.race([
            exited.then(() => true),
            new Promise<false>(
              (resolve) => (timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS)),
            ),
          ]).finally(() => clearTimeout(timer));
          if (!stopped) {
            child.kill('SIGKILL');
            await exited;
          }
        }
        await rm(dir, { recursive: true, force: true });
      })()),
  };
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
async function waitForPort(port: number, alive: () => boolean): Promise<true | Error> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && alive()) {
    const accepting = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1_000, () => done(false));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
    if (accepting) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return new Error(`nothing listening on port ${port} after ${START_TIMEOUT_MS} ms`);
}

/** A userlist.txt field: double-quoted, inner quotes doubled. */
function quote(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}
