import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { Registry, register } from 'prom-client';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  InvalidModuleOptionsError,
  NotificationsRetryModule,
  RetryCycleService,
  RetryMetricName,
  type NotificationsRetryModuleOptions,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
  resetTables,
} from './support/fixtures';
import { adaptersModule } from './support/retry-test-app';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import {
  createMigratedDatabase,
  dataSourceOptions,
  type TestDatabase,
} from './support/test-database';

const counterTotal = async (registry: Registry, name: string): Promise<number> => {
  const metric = registry.getSingleMetric(name);
  return ((await metric?.get())?.values ?? []).reduce((sum, value) => sum + value.value, 0);
};

/** How a host wires the module into an app with more than one database and its own metrics registry. */
describe('NotificationsRetryModule wiring: a named DataSource, a metrics registry (real PostgreSQL)', () => {
  let main: { db: TestDatabase; dataSource: DataSource };
  let notifications: { db: TestDatabase; dataSource: DataSource };
  const modules: TestingModule[] = [];
  // Every DataSource the modules made, closed at the end: a start that fails leaves its own open.
  const created: Array<{ dataSource: DataSource; initialized: Promise<unknown> }> = [];

  beforeAll(async () => {
    main = await createMigratedDatabase();
    notifications = await createMigratedDatabase();
  });

  afterAll(async () => {
    for (const module of modules) await module.close();
    for (const { dataSource, initialized } of created) {
      // A failed start stops waiting for its sibling DataSources; they may still be connecting.
      await initialized.catch(() => undefined);
      if (dataSource.isInitialized) await dataSource.destroy();
    }
    for (const { db, dataSource } of [main, notifications]) {
      await dataSource?.destroy();
      await db?.drop();
    }
  });

  async function start(
    options: NotificationsRetryModuleOptions & { dataSource?: string },
  ): Promise<TestingModule> {
    const module = await Test.createTestingModule({
      imports: [
        // The app's own database is the default DataSource; the notifications live in another one.
        typeOrmRoot(dataSourceOptions(main.db.url, { migrationsRun: false })),
        typeOrmRoot(
          dataSourceOptions(notifications.db.url, { migrationsRun: false }),
          'notifications',
        ),
        NotificationsRetryModule.forRoot({ enabled: false, ...options }),
        adaptersModule([ScriptedProviderAdapter]),
      ],
    }).compile();
    modules.push(module);
    await module.init();
    return module;
  }

  function typeOrmRoot(options: DataSourceOptions, name?: string) {
    return TypeOrmModule.forRootAsync({
      name,
      // The name again in the options: TypeOrmCoreModule finds its DataSource by it at shutdown.
      useFactory: () => ({ ...options, name, retryAttempts: 0 }),
      dataSourceFactory: async (resolved) => {
        const dataSource = new DataSource(resolved as DataSourceOptions);
        const initialized = dataSource.initialize();
        created.push({ dataSource, initialized });
        return initialized;
      },
    });
  }

  it('works on the DataSource named by the dataSource option and leaves the default one alone', async () => {
    const due = {
      status: 'Failed' as const,
      attempts: 1,
      nextAttemptAt: minutesAgo(new Date(), 1),
    };
    for (const { dataSource } of [main, notifications]) {
      await insertChannel(dataSource, { key: 'email' });
    }
    const inMain = await insertNotification(main.dataSource, due);
    const inNotifications = await insertNotification(notifications.dataSource, due);

    const module = await start({ dataSource: 'notifications' });
    const report = completed(await module.get(RetryCycleService).runCycle());

    expect(report.counts.sent).toBe(1);
    expect(await readNotification(notifications.dataSource, inNotifications)).toMatchObject({
      status: 'Sent',
    });
    expect(await readNotification(main.dataSource, inMain)).toMatchObject({
      status: 'Failed',
      attempts: 1,
    });
    // The lease, too, lives where the module works.
    expect(await main.dataSource.query('SELECT * FROM distributed_locks')).toEqual([]);
    expect(await notifications.dataSource.query('SELECT key FROM distributed_locks')).toEqual([
      { key: 'notifications:retry-worker' },
    ]);
    // The DataSource under that name is connected to the notifications database, the default one is not.
    const databaseOf = async (dataSource: DataSource): Promise<string> =>
      (await dataSource.query<Array<{ name: string }>>('SELECT current_database() AS name'))[0]
        .name;
    const notificationsDb = new URL(notifications.db.url).pathname.slice(1);
    expect(await databaseOf(module.get<DataSource>(getDataSourceToken('notifications')))).toBe(
      notificationsDb,
    );
    expect(await databaseOf(module.get<DataSource>(getDataSourceToken()))).not.toBe(
      notificationsDb,
    );
  });

  it('fails start-up naming the option and the value when no DataSource has that name', async () => {
    await expect(start({ dataSource: 'reporting' })).rejects.toThrow(InvalidModuleOptionsError);
    await expect(start({ dataSource: 'reporting' })).rejects.toThrow(/"dataSource".*reporting/s);
  });

  it('declares its metrics in the registry the host passes, not in the default one', async () => {
    const registry = new Registry();
    await resetTables(notifications.dataSource);
    await insertChannel(notifications.dataSource, { key: 'email' });
    await insertNotification(notifications.dataSource, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(new Date(), 1),
    });
    const defaultBefore = await counterTotal(register, RetryMetricName.sent);

    const module = await start({ dataSource: 'notifications', metrics: { registry } });
    completed(await module.get(RetryCycleService).runCycle());

    expect(await counterTotal(registry, RetryMetricName.sent)).toBe(1);
    expect(await counterTotal(register, RetryMetricName.sent)).toBe(defaultBefore);
    expect(await registry.metrics()).toContain(RetryMetricName.claimDuration);
  });

  it('refuses a metrics registry that is not one at start, naming the option', async () => {
    await expect(start({ metrics: { registry: {} as Registry } })).rejects.toThrow(
      /"metrics\.registry"/,
    );
  });
});
