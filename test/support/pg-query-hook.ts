import { Client } from 'pg';

type Query = (this: Client, ...args: unknown[]) => unknown;

/**
 * Sees each promise-style `pg` query of every client in this process (the
 * TypeORM pool's included) before it is sent: its client and its text. The
 * hook may run statements of its own on that client with `send`, which
 * bypasses the hook; the query goes out once the hook resolves.
 */
export type QueryHook = (
  text: string | undefined,
  send: (sql: string) => Promise<{ rows: Array<Record<string, unknown>> }>,
) => Promise<void> | void;

/** Runs `run` with `hook` in front of `Client.prototype.query`, restored afterwards. */
export async function withQueryHook<T>(hook: QueryHook, run: () => Promise<T>): Promise<T> {
  const prototype = Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  prototype.query = function (this: Client, ...args: unknown[]): unknown {
    // A callback-style call is not awaited by its caller: leave it alone.
    if (typeof args[args.length - 1] === 'function') return original.apply(this, args);
    const send = (sql: string): Promise<{ rows: Array<Record<string, unknown>> }> =>
      original.call(this, sql) as Promise<{ rows: Array<Record<string, unknown>> }>;
    return Promise.resolve(hook(queryText(args[0]), send)).then(() => original.apply(this, args));
  };
  try {
    return await run();
  } finally {
    prototype.query = original;
  }
}

/**
 * `idle_in_transaction_session_timeout` (ms, as the server reports it) in force
 * at each row lock, the first statement of every row transaction: read on the
 * same client, so inside that transaction (through a pooler, on the same
 * server connection).
 */
export async function idleTimeoutsAtRowLocks(run: () => Promise<unknown>): Promise<string[]> {
  const settings: string[] = [];
  await withQueryHook(async (text, send) => {
    // The row lock, not the lease acquire (which skips a locked lease row the same way).
    if (text === undefined || !/FROM notifications\b[\s\S]*FOR UPDATE SKIP LOCKED/.test(text))
      return;
    const { rows } = await send(IDLE_TIMEOUT_SETTING_SQL);
    settings.push(String(rows[0]?.setting));
  }, run);
  return settings;
}

export const IDLE_TIMEOUT_SETTING_SQL = `SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'`;

function queryText(config: unknown): string | undefined {
  if (typeof config === 'string') return config;
  const text = (config as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : undefined;
}
