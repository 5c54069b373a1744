import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { join, resolve } from 'node:path';

const REPO_ROOT = resolve(__dirname, '..', '..');
const CHILD_HOST = join(REPO_ROOT, 'test', 'shutdown.child-host.ts');

export interface ChildHost {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>>;
  /** What the child wrote to stderr so far. */
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  waitForLine(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs: number,
  ): Promise<void>;
  events(event: string): Array<Record<string, unknown>>;
}

export interface ChildHostOptions {
  /**
   * In a process group of its own, as a shell runs a foreground job: a
   * signal sent to the group (`process.kill(-pid)`) is what Ctrl-C sends.
   */
  readonly ownProcessGroup?: boolean;
}

/**
 * The host (bootstrapHost, as main.ts runs it, with the slow adapter of
 * shutdown.child-host.ts) in a child process, its JSON log lines collected.
 * A null `databaseUrl` leaves DATABASE_URL unset: the host starts its embedded
 * PostgreSQL, as `npm start` does.
 */
export function startChildHost(
  databaseUrl: string | null,
  env: Record<string, string>,
  options: ChildHostOptions = {},
): ChildHost {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  delete inherited.DATABASE_URL;
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', CHILD_HOST],
    {
      cwd: REPO_ROOT,
      env: {
        ...inherited,
        TS_NODE_PROJECT: join(REPO_ROOT, 'tsconfig.json'),
        ...(databaseUrl === null ? {} : { DATABASE_URL: databaseUrl }),
        PORT: '0',
        LOG_LEVEL: 'info',
        RETRY_CRON: '* * * * * *',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.ownProcessGroup ?? false,
    },
  );
  return watchHost(child);
}

/**
 * `npm start` as a fresh clone runs it (npm → nest CLI: build, then the built
 * main.js), in a process group of its own as a terminal's foreground job.
 * Through the npm that runs this test when there is one (`npm test`).
 */
export function startNpmStart(env: Record<string, string>): ChildHost {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  delete inherited.DATABASE_URL;
  const npmCli = process.env.npm_execpath;
  const [file, args] = npmCli ? [process.execPath, [npmCli, 'start']] : ['npm', ['start']];
  const child = spawn(file, args, {
    cwd: REPO_ROOT,
    env: { ...inherited, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return watchHost(child);
}

/** The child's JSON log lines (other lines kept as `raw`), its stderr and its exit. */
function watchHost(child: ChildProcessByStdio<null, Readable, Readable>): ChildHost {
  const lines: Array<Record<string, unknown>> = [];
  const stderr: string[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part) as Record<string, unknown>);
      } catch {
        lines.push({ raw: part });
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => void stderr.push(chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolveExit) =>
      child.on('exit', (code, signal) => resolveExit({ code, signal, at: Date.now() })),
  );
  return {
    child,
    lines,
    stderr: () => stderr.join(''),
    exited,
    events: (event) => lines.filter((line) => line.event === event),
    async waitForLine(predicate, timeoutMs) {
      const started = Date.now();
      while (!lines.some(predicate)) {
        if (child.exitCode !== null) {
          throw new Error(`child host exited (${child.exitCode}): ${stderr.join('')}`);
        }
        if (Date.now() - started > timeoutMs) {
          throw new Error(
            `no matching log line within ${timeoutMs} ms; stderr: ${stderr.join('')}`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
