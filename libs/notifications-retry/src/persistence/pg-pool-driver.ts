import type { PoolClient } from 'pg';
import type { DataSource } from 'typeorm';

/** The one method of TypeORM's PostgresDriver used here: a client checked out of its `pg` pool. */
export interface PgPoolDriver {
  obtainMasterConnection(): Promise<[PoolClient, unknown]>;
}

/** TypeORM's postgres driver of `dataSource`, whose `pg` pool the library's statements use. */
export function pgPoolDriver(dataSource: DataSource): PgPoolDriver {
  const driver = dataSource.driver as Partial<PgPoolDriver>;
  if (typeof driver.obtainMasterConnection !== 'function') {
    throw new Error(
      `@pin/notifications-retry needs TypeORM's postgres driver, got ${dataSource.options.type}`,
    );
  }
  return driver as PgPoolDriver;
}
