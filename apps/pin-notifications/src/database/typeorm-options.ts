import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { notificationsRetryEntities, notificationsRetryMigrations } from '@pin/notifications-retry';
import { TypeOrmNestLogger } from './typeorm-nest-logger';

/**
 * The host's pool. Provider calls hold no connection: the worker needs one for
 * a claim and one or two for outcome writes, each for one statement's round
 * trip, whatever its concurrency; /health and the rest of the app share it.
 */
export const HOST_POOL_SIZE = 10;

/**
 * The host's TypeORM root: the library's schema, applied by migrations only,
 * and never by TypeORM at connect time: `createMigratedDataSource` runs them
 * under an advisory lock, so replicas starting together do not race.
 */
export function typeOrmOptions(url: string, poolSize = HOST_POOL_SIZE): TypeOrmModuleOptions {
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
      max: poolSize,
      // Fail a start or a cycle instead of waiting forever for a connection the pool cannot give.
      connectionTimeoutMillis: 10_000,
      // A partitioned network must not leave a statement hanging until the kernel gives up (~2 h).
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // No session settings as startup parameters (such as idle_in_transaction_session_timeout):
      // PgBouncer refuses the connection. The library opens no transaction of its own (every
      // statement is autocommit); a global guard belongs on the role (ALTER ROLE … SET, see README).
    },
  };
}
