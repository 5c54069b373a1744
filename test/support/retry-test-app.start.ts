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
import { resetTables } from './fixtures';
import { dataSourceOptions } from './test-database';

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
 *
 * Internal to the harness: specs get apps from `useRetryTestApp` / `useRetryDatabase`
 * (retry-test-app.ts), which close every app they started.
 */
export async function startRetryTestApp(config: RetryTestAppOptions): Promise<RetryTestApp> {
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
  let closing: Promise<void> | undefined;
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
    // Once: a test about closing closes the app itself, and the harness closes every app it started.
    close: () => (closing ??= module.close()),
  };
}

/** A team's own module declaring adapters: the retry module must find them with no registration call. */
export function adaptersModule(adapters: Provider[]): DynamicModule {
  @Module({})
  class TeamAdaptersModule {}
  return { module: TeamAdaptersModule, providers: adapters };
}
