import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { errorText } from '../vocabulary/error-text';
import { RetryMetrics } from '../observability/retry-metrics';
import { InjectNotificationsRetryDataSource } from './notifications-retry-data-source';

/** The part of a `pg` Pool used here. */
interface PgPool extends EventEmitter {
  /** pg-pool's list of every client it holds, idle or checked out (internal, but stable for years). */
  readonly _clients?: unknown;
}

/** Marks a client that already has the guard's listener. */
const GUARDED = Symbol('notifications-retry:pg-error-guarded');

/**
 * A permanent `error` listener on every client of the host DataSource's `pg`
 * pools, from the moment the pool creates it, whoever checks it out.
 *
 * pg-pool listens to a client's errors only while the client is idle: between
 * checkout and the first query (and while its holder waits on something else)
 * nobody does, and a connection the server drops then (`pg_terminate_backend`,
 * a failover, a proxy restart) emits an `error` with no listener, which Node
 * turns into an uncaught exception: the process dies. The client itself is
 * already unusable; its holder finds out at its next query or at release, and
 * pg-pool discards it. Here the error is only logged and counted.
 */
@Injectable()
export class PgClientErrorGuard implements OnModuleInit {
  private readonly logger = new Logger('NotificationsRetryDatabase');

  constructor(
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    private readonly metrics: RetryMetrics,
  ) {}

  onModuleInit(): void {
    for (const pool of pgPools(this.dataSource)) {
      pool.on('connect', (client: unknown) => this.guard(client));
      // Clients made before this module started (TypeORM's first connection, say).
      if (Array.isArray(pool._clients)) for (const client of pool._clients) this.guard(client);
    }
  }

  private guard(client: unknown): void {
    if (!isEmitter(client) || (client as { [GUARDED]?: true })[GUARDED]) return;
    (client as { [GUARDED]?: true })[GUARDED] = true;
    client.on('error', (error: unknown) => {
      this.metrics.databaseClientError();
      this.logger.warn({
        msg: 'pg-client-error',
        event: 'pg-client-error',
        error: errorText(error),
        code: (error as { code?: unknown } | null)?.code,
      });
    });
  }
}

/** The `pg` pools of TypeORM's postgres driver: the master, and any replicas. */
function pgPools(dataSource: DataSource): PgPool[] {
  const driver = dataSource.driver as { master?: unknown; slaves?: unknown };
  const slaves = Array.isArray(driver.slaves) ? (driver.slaves as unknown[]) : [];
  return [driver.master, ...slaves].filter(isEmitter);
}

function isEmitter(value: unknown): value is EventEmitter {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as EventEmitter).on === 'function' &&
    typeof (value as EventEmitter).emit === 'function'
  );
}
