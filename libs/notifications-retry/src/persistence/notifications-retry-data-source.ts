import { Inject, type Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';

/**
 * The host's TypeORM DataSource the module works on: the default one, or the
 * one named by `forRoot({ dataSource })`. Extensions that run SQL of their own
 * next to the module's (a custom DistributedLock) inject it with
 * `@InjectNotificationsRetryDataSource()`.
 */
export const NOTIFICATIONS_RETRY_DATA_SOURCE = Symbol('NOTIFICATIONS_RETRY_DATA_SOURCE');

export const InjectNotificationsRetryDataSource = (): ParameterDecorator =>
  Inject(NOTIFICATIONS_RETRY_DATA_SOURCE);

/**
 * Resolves the DataSource by its @nestjs/typeorm token. Injected optionally,
 * so that a name nobody registered fails start-up with an error that names the
 * option and the value rather than Nest's unresolved-dependency message.
 */
export function notificationsRetryDataSourceProvider(name: string | undefined): Provider {
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) {
    throw new InvalidModuleOptionsError(
      'dataSource',
      name,
      'must be the non-empty name of a TypeORM DataSource',
    );
  }
  return {
    provide: NOTIFICATIONS_RETRY_DATA_SOURCE,
    useFactory: (dataSource: DataSource | undefined): DataSource => {
      if (!dataSource) {
        throw new InvalidModuleOptionsError(
          'dataSource',
          name ?? 'default',
          'names no TypeORM DataSource of this app: register it with TypeOrmModule.forRoot({ name, ... }) (or forRootAsync) before the retry module',
        );
      }
      return dataSource;
    },
    inject: [{ token: getDataSourceToken(name), optional: true }],
  };
}
