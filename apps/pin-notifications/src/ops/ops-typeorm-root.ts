import type { DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { typeOrmOptions } from '../database/typeorm-options';

/**
 * The ops CLI connects once and gives up after this long: an operator waits at
 * a prompt, and a database that does not answer in 5 s is the answer.
 */
export const OPS_CONNECT_TIMEOUT_MS = 5_000;

/**
 * The app's TypeORM root as the ops CLI opens it: the same schema and pool,
 * one connect attempt (an unreachable database is reported at once, exit 2,
 * not waited out by the app's start-up retries), and no migrations: the CLI
 * works on the schema the deploy migrated.
 */
export function opsTypeOrmRoot(databaseUrl: string): DynamicModule {
  return TypeOrmModule.forRootAsync({
    useFactory: () => {
      const base = typeOrmOptions(databaseUrl);
      return {
        ...base,
        extra: { ...(base.extra as object), connectionTimeoutMillis: OPS_CONNECT_TIMEOUT_MS },
        retryAttempts: 0,
      };
    },
    dataSourceFactory: (dataSourceOptions) => {
      if (!dataSourceOptions) throw new Error('TypeORM options are missing');
      return new DataSource(dataSourceOptions).initialize();
    },
  });
}
