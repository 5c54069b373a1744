import { randomUUID } from 'node:crypto';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  AlertSink,
  Clock,
  NotificationsRetryModule,
  RandomSource,
  RetryCycleService,
  RetryWorkerHealthService,
  type NotificationsRetryExtensions,
  type NotificationsRetryModuleOptions,
  type TerminalFailureAlert,
} from '@pin/notifications-retry';
import { CapturingLogger } from './capturing-logger';
import { FakeClock } from './fake-clock';
import { FixedRandomSource } from './fixed-random-source';
import { ScriptedProviderAdapter } from './scripted-provider-adapter';
import { insertChannel, resetTables, type ChannelFixture } from './fixtures';
import { createTestDatabase, dataSourceOptions, type TestDatabase } from './test-database';

/** Collects alerts so tests can assert on them. */
export class RecordingAlertSink extends AlertSink {
  readonly alerts: TerminalFailureAlert[] = [];

  terminalFailure(alert: TerminalFailureAlert): void {
    this.alerts.push(alert);
  }
}

export interface RetryTestAppOptions {
  readonly url: string;
  readonly options?: NotificationsRetryModuleOptions;
  readonly extensions?: NotificationsRetryExtensions;
  /** Adapters registered the way a team would: in their own module, in any Nest provider form. */
  readonly adapters?: Provider[];
  /** A clock the test moves by hand (default), or 'database': the library's own DatabaseClock. */
  readonly clock?: FakeClock | 'database';
  /** Jitter sample for backoff; default 0.5, the undisturbed delay. */
  readonly random?: FixedRandomSource;
  readonly poolSize?: number;
}

export interface RetryTestApp {
  readonly module: TestingModule;
  readonly cycles: RetryCycleService;
  /** The worker's verdict, as /health reads it. */
  readonly workerHealth: RetryWorkerHealthService;
  readonly dataSource: DataSource;
  /** The test's clock; with `clock: 'database'` a FakeClock the app does not use. */
  readonly clock: FakeClock;
  readonly random: FixedRandomSource;
  readonly alerts: RecordingAlertSink;
  readonly provider: ScriptedProviderAdapter;
  readonly logs: CapturingLogger;
  /** Empties the tables, sets the clock back, forgets recorded calls, alerts and log lines: between tests sharing one app. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A Nest application as a host would assemble it: its own TypeORM root (and so
 * its own DataSource and pool), the retry module, and a team module with adapters.
 * The schedule is off: tests call `runCycle()`.
 */
export async function createRetryTestApp(config: RetryTestAppOptions): Promise<RetryTestApp> {
  const clock = config.clock instanceof FakeClock ? config.clock : new FakeClock();
  const startedAt = clock.now();
  const alerts = new RecordingAlertSink();
  const random = config.random ?? new FixedRandomSource();
  const testing = Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      TypeOrmModule.forRoot(
        dataSourceOptions(config.url, { extra: { max: config.poolSize ?? 20 } }),
      ),
      NotificationsRetryModule.forRoot({
        enabled: false,
        concurrency: 4,
        ...config.options,
        extensions: config.extensions,
      }),
      adaptersModule(config.adapters ?? [ScriptedProviderAdapter]),
    ],
  });
  const builder = (
    config.clock === 'database' ? testing : testing.overrideProvider(Clock).useValue(clock)
  )
    .overrideProvider(AlertSink)
    .useValue(alerts)
    .overrideProvider(RandomSource)
    .useValue(random);
  const logs = new CapturingLogger();
  const module = await builder.compile();
  module.useLogger(logs);
  try {
    await module.init();
  } catch (error) {
    // A start-up that fails on purpose must not leave its DataSource's pool open behind the test.
    await module.close().catch(() => undefined);
    throw error;
  }
  const adapters = config.adapters ?? [ScriptedProviderAdapter];
  const dataSource = module.get(DataSource);
  const provider = adapters.includes(ScriptedProviderAdapter)
    ? module.get(ScriptedProviderAdapter)
    : (undefined as unknown as ScriptedProviderAdapter);
  return {
    module,
    cycles: module.get(RetryCycleService),
    workerHealth: module.get(RetryWorkerHealthService),
    dataSource,
    clock,
    random,
    alerts,
    logs,
    provider,
    reset: async () => {
      clock.set(startedAt);
      await resetTables(dataSource);
      if (provider) provider.calls.length = 0;
      alerts.alerts.length = 0;
      logs.entries.length = 0;
    },
    close: () => module.close(),
  };
}

/** What `useRetryTestApp` hands a test file: the app, its database, and seed helpers. */
export interface RetryTestBundle {
  readonly app: RetryTestApp;
  readonly db: TestDatabase;
  readonly ds: DataSource;
  /** `count` due Failed rows of `channel` (default email), oldest first; their ids. */
  dueRows(count: number, channel?: string): Promise<string[]>;
}

/**
 * One app for a test file, owning its lifecycle: a fresh database and app
 * before all tests, a complete reset (tables, recorded calls, log lines, the
 * provider's script) and the `email` channel before each, and everything
 * closed after. Call it at the top of a `describe`; read the bundle inside tests.
 */
export function useRetryTestApp(
  config: Omit<RetryTestAppOptions, 'url'> & { readonly channels?: readonly ChannelFixture[] } = {},
): RetryTestBundle {
  let app: RetryTestApp | undefined;
  let db: TestDatabase | undefined;
  const bundle: RetryTestBundle = {
    get app() {
      if (!app) throw new Error('useRetryTestApp: the app exists only inside tests');
      return app;
    },
    get db() {
      if (!db) throw new Error('useRetryTestApp: the database exists only inside tests');
      return db;
    },
    get ds() {
      return bundle.app.dataSource;
    },
    async dueRows(count, channel = 'email') {
      const now = bundle.app.clock.now();
      const ids = Array.from({ length: count }, () => randomUUID());
      await bundle.ds.query(
        `INSERT INTO notifications (id, channel, recipient_address, subject, body, status, attempts, next_attempt_at)
         SELECT id, $2, 'person-' || left(id::text, 8) || '@example.com', 'Your statement',
                'Hello, your statement is ready.', 'Failed', 1, $3::timestamptz - (ord || ' ms')::interval
           FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord)`,
        [ids, channel, new Date(now.getTime() - 60_000 + count)],
      );
      return ids;
    },
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    app = await createRetryTestApp({ ...config, url: db.url });
  });
  beforeEach(async () => {
    await bundle.app.reset();
    bundle.app.provider?.respondWith((message) => ({
      providerMessageId: `scripted-${message.id}`,
    }));
    for (const channel of config.channels ?? [{ key: 'email' }])
      await insertChannel(bundle.ds, channel);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });
  return bundle;
}

/** A team's own module declaring adapters: the retry module must find them with no registration call. */
export function adaptersModule(adapters: Provider[]): DynamicModule {
  @Module({})
  class TeamAdaptersModule {}
  return { module: TeamAdaptersModule, providers: adapters };
}
