import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { notificationsRetryEntities, notificationsRetryMigrations } from '@pin/notifications-retry';
import { TypeOrmNestLogger } from './typeorm-nest-logger';

/**
 * Connections beyond the worker's concurrency: each row in flight holds one for
 * its whole transaction, provider call included, while the lease, the claim
 * query, /health and the rest of the app need their own.
 */
export const POOL_HEADROOM = 5;

/** The host's TypeORM root: the library's schema, applied by migrations only. */
export function typeOrmOptions(url: string, retryConcurrency: number): TypeOrmModuleOptions {
  return {
    type: 'postgres',
    url,
    entities: notificationsRetryEntities,
    migrations: notificationsRetryMigrations,
    migrationsRun: true,
    // Other modules of the monolith share these tables: only reviewed migrations may change them.
    synchronize: false,
    logger: new TypeOrmNestLogger(),
    extra: { max: retryConcurrency + POOL_HEADROOM },
  };
}
