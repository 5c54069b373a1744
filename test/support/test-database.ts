import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { notificationsRetryEntities, notificationsRetryMigrations } from '@pin/notifications-retry';
import { testServerUrl } from './test-server';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the test server, so test files never see each other's rows. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = testServerUrl();
  const name = `nrt_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withClient(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      ).then(() => undefined),
  };
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

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
