import type { PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { setIdleInTransactionTimeoutSql } from './idle-in-transaction-timeout';
import { preparedStatementName } from './prepared-statement-name';
import type { SqlExecutor } from './sql-executor';

export interface PooledPgTransactionOptions {
  /**
   * Send the statements as named prepared statements (parsed and planned once
   * per connection). Off for poolers that do not keep them across
   * transactions, e.g. PgBouncer in transaction mode before 1.21.
   */
  readonly preparedStatements: boolean;
  /**
   * The longest the transaction may sit idle before the server ends it:
   * `SET LOCAL idle_in_transaction_session_timeout`, sent with BEGIN.
   */
  readonly idleInTransactionTimeoutMs: number;
  /** Told of each failed named statement (the connection may not keep them; see PreparedStatementMode). */
  readonly onNamedStatementError?: (error: unknown) => void;
}

/** The one method of TypeORM's PostgresDriver used here: a client checked out of its `pg` pool. */
export interface PgPoolDriver {
  obtainMasterConnection(): Promise<[PoolClient, unknown]>;
}

/**
 * Runs `work` in a transaction on a client taken straight from the `pg` pool of
 * the host's TypeORM DataSource: no QueryRunner, no broadcaster events, no
 * TypeORM query logging or `maxQueryExecutionTime` (the statements are the
 * cycle's hot path; the cycle logs its own outcome per row).
 *
 * BEGIN and the idle bound go in one simple-query message, so the bound costs
 * no round trip; through PgBouncer in transaction mode that message already
 * opens the transaction, which keeps one server connection until it ends.
 *
 * Commits when `work` resolves; rolls back and rethrows when anything throws.
 * The client goes back to the pool on every path. A client whose connection
 * failed (an `error` event, or a ROLLBACK that cannot even be sent) is released
 * with that error, so the pool closes it rather than handing it out again.
 */
export async function runInPooledPgTransaction<T>(
  dataSource: DataSource,
  options: PooledPgTransactionOptions,
  work: (executor: SqlExecutor) => Promise<T>,
): Promise<T> {
  const begin = `BEGIN; ${setIdleInTransactionTimeoutSql(options.idleInTransactionTimeoutMs)}`;
  const [client] = await pgPoolDriver(dataSource).obtainMasterConnection();
  // pg-pool stops listening to a client's errors while it is checked out. Without a listener, a
  // connection the server drops while the row waits on its provider would crash the process.
  let connectionError: Error | undefined;
  const onError = (error: Error): void => {
    connectionError ??= error;
  };
  client.on('error', onError);
  let rollbackError: Error | undefined;
  try {
    await client.query(begin);
    const result = await work({
      query: async (sql, parameters) => {
        if (!options.preparedStatements) {
          return (await client.query<Record<string, unknown>>({ text: sql, values: parameters }))
            .rows;
        }
        try {
          const named = { name: preparedStatementName(sql), text: sql, values: parameters };
          return (await client.query<Record<string, unknown>>(named)).rows;
        } catch (error) {
          options.onNamedStatementError?.(error);
          throw error;
        }
      },
    });
    // On a transaction aborted by an error that `work` swallowed, PostgreSQL answers COMMIT with
    // ROLLBACK and no error: that must not read as written.
    const commit = await client.query('COMMIT');
    if (commit.command !== 'COMMIT') {
      throw new Error(
        `the row transaction was rolled back at COMMIT (server answered ${commit.command})`,
      );
    }
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (failure) {
      rollbackError = failure instanceof Error ? failure : new Error(String(failure));
    }
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(connectionError ?? rollbackError);
  }
}

/** TypeORM's postgres driver of `dataSource`, whose `pg` pool the library's own statements use. */
export function pgPoolDriver(dataSource: DataSource): PgPoolDriver {
  const driver = dataSource.driver as Partial<PgPoolDriver>;
  if (typeof driver.obtainMasterConnection !== 'function') {
    throw new Error(
      `@pin/notifications-retry needs TypeORM's postgres driver, got ${dataSource.options.type}`,
    );
  }
  return driver as PgPoolDriver;
}
