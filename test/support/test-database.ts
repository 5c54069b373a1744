import { DataSource, type DataSourceOptions } from 'typeorm';
import { notificationsRetryEntities, notificationsRetryMigrations } from '@pin/notifications-retry';
import { createScratchDatabase, type ScratchDatabase } from '../../src/database/scratch-database';
import { testServerUrl } from './test-server';

export type TestDatabase = ScratchDatabase;

/** A fresh, empty database on the test server, so test files never see each other's rows. */
export function createTestDatabase(): Promise<TestDatabase> {
  return createScratchDatabase(testServerUrl(), 'nrt');
}

/** TypeORM options as a host would write them: the library's entities and migrations, never synchronize. */
export function dataSourceOptions(
  url: string,
  extra: Partial<DataSourceOptions> = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: notificationsRetryEntities,
    migrations: notificationsRetryMigrations,
    migrationsRun: true,
    synchronize: false,
    logging: false,
    ...extra,
  } as DataSourceOptions;
}

/** A migrated database and a DataSource on it, for tests that arrange and inspect rows. */
export async function createMigratedDatabase(): Promise<{
  db: TestDatabase;
  dataSource: DataSource;
}> {
  const db = await createTestDatabase();
  const dataSource = new DataSource(dataSourceOptions(db.url));
  await dataSource.initialize();
  return { db, dataSource };
}
