import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { notificationsRetryEntities, notificationsRetryMigrations } from '@pin/notifications-retry';
import { TypeOrmNestLogger } from './typeorm-nest-logger';

/**
 * Connections beyond the worker's concurrency: each row in flight holds one for
 * its whole transaction, provider call included, while the lease, the claim
 * query, /health and the rest of the app need their own.
 */
export const POOL_HEADROOM = 5;

/**
 * The host's TypeORM root: the library's schema, applied by migrations only,
 * and never by TypeORM at connect time: `createMigratedDataSource` runs them
 * under an advisory lock, so replicas starting together do not race.
 */
export function typeOrmOptions(url: string, retryConcurrency: number): TypeOrmModuleOptions {
  return {
    type: 'postgres',
    url,
    entities: notificationsRetryEntities,
    migrations: notificationsRetryMigrations,
    migrationsRun: false,
    // Other modules of the monolith share these tables: only reviewed migrations may change them.
    synchronize: false,
    logger: new TypeOrmNestLogger(),
    extra: {
      max: retryConcurrency + POOL_HEADROOM,
      // Fail a start or a cycle instead of waiting forever for a connection the pool cannot give.
      connectionTimeoutMillis: 10_000,
      // A partitioned network must not leave a row lock held until the kernel gives up (~2 h).
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // No session settings as startup parameters (such as idle_in_transaction_session_timeout):
      // PgBouncer refuses the connection. The library bounds its own row transactions with SET
      // LOCAL; a global guard belongs on the role (ALTER ROLE … SET, see README).
    },
  };
}
