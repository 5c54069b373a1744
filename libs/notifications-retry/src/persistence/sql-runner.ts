import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { ConnectionWaitTimeoutError } from '../errors/connection-wait-timeout.error';
import { isConnectionLost } from './database-error-kind';
import { InjectNotificationsRetryDataSource } from './notifications-retry-data-source';
import { pgPoolDriver } from './pg-pool-driver';
import { PreparedStatementMode } from './prepared-statement-mode';
import type { SqlStatement } from './sql/sql-statement';

/**
 * The library's one way to the database: a compiled statement, run on its
 * own (autocommit: every statement of the cycle is one atomic step, so no
 * transaction is ever open between two of them), on a client taken straight
 * from the `pg` pool of the host's DataSource. Named prepared statements where
 * PreparedStatementMode allows, so the server parses and plans each statement
 * once per connection.
 *
 * `connectBy` (a `performance.now()` instant) bounds the wait for a pooled
 * connection: a cycle waits no longer than its lease lasts.
 *
 * A client whose statement failed because its connection is gone (SQLSTATE
 * 57P*, 08*, the socket ended) is destroyed, never pooled again: the FATAL
 * reply of a terminated backend arrives before the socket's end, and a client
 * released in between would be handed straight to the next statement waiting
 * for one (DESIGN §3.5).
 */
@Injectable()
export class SqlRunner {
  constructor(
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    private readonly preparedStatements: PreparedStatementMode,
  ) {}

  async run<Row>(
    statement: SqlStatement,
    values: readonly unknown[],
    connectBy?: number,
  ): Promise<Row[]> {
    const named = await this.preparedStatements.named();
    const unnamed = { text: statement.text, values: [...values] };
    return this.withClient(connectBy, async (client) => {
      if (!named) return (await client.query(unnamed)).rows as Row[];
      try {
        return (await client.query({ name: statement.name, ...unnamed })).rows as Row[];
      } catch (error) {
        // Refused at PARSE or BIND, so it never ran: safe to send again, unnamed.
        if (!this.preparedStatements.namedStatementFailed(error)) throw error;
        return (await client.query(unnamed)).rows as Row[];
      }
    });
  }

  /**
   * A statement whose text is not compiled into a prepared one (the outbox
   * relay's), sent unnamed with the same care for its connection: its rows
   * and how many rows it changed.
   */
  async query<Row>(
    text: string,
    values: readonly unknown[] = [],
  ): Promise<{ rows: Row[]; rowCount: number }> {
    return this.withClient(undefined, async (client) => {
      const result = await client.query({ text, values: [...values] });
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    });
  }

  private async withClient<T>(
    connectBy: number | undefined,
    work: (client: PoolClient) => Promise<T>,
  ): Promise<T> {
    const client = await this.connect(connectBy);
    // pg-pool stops listening to a client's errors while it is checked out; a dropped connection
    // must go back as broken, so the pool closes it instead of handing it out again.
    let broken: Error | undefined;
    const onError = (error: Error): void => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      return await work(client);
    } catch (error) {
      if (isConnectionLost(error)) broken ??= error as Error;
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  private connect(connectBy: number | undefined): Promise<PoolClient> {
    const checkout = pgPoolDriver(this.dataSource)
      .obtainMasterConnection()
      .then(([client]) => client);
    if (connectBy === undefined) return checkout;
    const waitMs = connectBy - performance.now();
    return new Promise<PoolClient>((resolve, reject) => {
      let gaveUp = false;
      const timer = setTimeout(
        () => {
          gaveUp = true;
          reject(new ConnectionWaitTimeoutError(Math.max(0, waitMs)));
          // The checkout stays queued in the pool; whatever it brings goes straight back.
          checkout.then(
            (client) => client.release(),
            () => undefined,
          );
        },
        Math.max(0, waitMs),
      );
      checkout.then(
        (client) => {
          if (gaveUp) return;
          clearTimeout(timer);
          resolve(client);
        },
        (error: Error) => {
          clearTimeout(timer);
          // As it came (pg rejects with an Error, maybe of another realm): its code says whether the
          // database refused the connection.
          if (!gaveUp) reject(error);
        },
      );
    });
  }
}
