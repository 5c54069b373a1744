import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InsufficientPoolSizeError } from '../errors/insufficient-pool-size.error';
import { InjectNotificationsRetryDataSource } from './notifications-retry-data-source';

/** node-postgres' own default pool size. */
const DEFAULT_PG_POOL_SIZE = 10;
/**
 * Outcome writes side by side at most. Each is one commit, and commits that
 * wait on the WAL together are flushed together: with two, a write of 100 rows
 * waited for the one before it at a few thousand rows a second (issue 23's
 * 50 ms cell); four keep up with the call slots and leave the pool room.
 */
const MAX_WRITE_STATEMENTS = 4;
/** A claim and an outcome write at once; more only makes writes wait less. */
export const MIN_POOL_SIZE = 2;

/**
 * How the cycle shares the host DataSource's pool: calls hold no connection,
 * so it needs room for a claim and a write at once, and runs at most four
 * outcome writes side by side, always leaving one connection for the claim.
 * Checked at module init: a pool too small for that stops start-up.
 */
@Injectable()
export class ConnectionPoolBudget implements OnModuleInit {
  private statements = MIN_POOL_SIZE - 1;

  constructor(@InjectNotificationsRetryDataSource() private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    const extra = (this.dataSource.options as { extra?: { max?: unknown } }).extra;
    const poolSize = (this.dataSource.options as { poolSize?: unknown }).poolSize;
    const size =
      typeof extra?.max === 'number'
        ? extra.max
        : typeof poolSize === 'number'
          ? poolSize
          : DEFAULT_PG_POOL_SIZE;
    if (size < MIN_POOL_SIZE) throw new InsufficientPoolSizeError(size, MIN_POOL_SIZE);
    this.statements = Math.min(MAX_WRITE_STATEMENTS, size - 1);
  }

  /** Outcome-write statements a cycle may have in flight at once. */
  get writeStatements(): number {
    return this.statements;
  }
}
