import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { register } from 'prom-client';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import {
  createMigratedDataSource,
  NatsJetStreamOutboxPublisher,
  NotificationsRetryModule,
  type NotificationsRetryExtensions,
  type NotificationsRetryModuleOptions,
} from '@pin/notifications-retry';
import { AdminModule } from './admin/admin.module';
import type { AppModuleOptions } from './app-module-options';
import { DEFAULT_OUTBOX_RETENTION_DAYS } from './config/outbox-relay-config';
import { isRetryableDataSourceError } from './database/retryable-start-error';
import { typeOrmOptions } from './database/typeorm-options';
import { DemoModule } from './demo/demo.module';
import { HealthModule } from './health/health.module';
import { loggerParams } from './logging/logger-params';
import { opsTypeOrmRoot } from './ops/ops-typeorm-root';
import { createRootLogger } from './logging/root-logger';

/** The Pin notifications host: logging, the TypeORM root, the retry worker, /health. */
@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions): DynamicModule {
    const retryOptions: NotificationsRetryModuleOptions = options.demo
      ? // The demo catalog routes push to the built-in stub; without its flag those rows would only wait.
        {
          ...options.retryWorker,
          stubProviders: { ...options.retryWorker.stubProviders, push: true },
        }
      : options.retryWorker;
    const ops = options.ops;
    // The relay runs where NATS is configured; without it the events stay in notification_outbox.
    // Never from the ops CLI: the running app publishes.
    const relay = (ops ? undefined : options.outboxRelay) ?? {
      nats: null,
      retentionDays: DEFAULT_OUTBOX_RETENTION_DAYS,
    };
    const nats = relay.nats;
    const extensions: NotificationsRetryExtensions = nats
      ? {
          outboxPublisher: {
            useFactory: () =>
              new NatsJetStreamOutboxPublisher({
                servers: [...nats.servers],
                subjectPrefix: nats.subjectPrefix,
                stream: nats.stream,
                createStream: nats.createStream,
                // The stream's duplicate window is checked against these.
                outboxRelay: relayOptions.outboxRelay,
              }),
          },
        }
      : {};
    const relayOptions: NotificationsRetryModuleOptions = {
      ...retryOptions,
      outboxRelay: {
        ...retryOptions.outboxRelay,
        enabled: nats !== null,
        retentionMs: relay.retentionDays * 86_400_000,
      },
      // Last: the CLI checks, once the module is open, that its overrides are what the module runs with.
      ...ops,
    };
    return {
      module: AppModule,
      imports: [
        LoggerModule.forRoot(loggerParams(options.logger ?? createRootLogger('info'))),
        ScheduleModule.forRoot(),
        // GET /metrics: the library's metrics plus Node's process metrics, prom-client's default registry.
        PrometheusModule.register({
          path: '/metrics',
          // prom-client's registry is process-wide: a second app in one process (tests) must not register them twice.
          defaultMetrics: {
            enabled: register.getSingleMetric('process_cpu_user_seconds_total') === undefined,
          },
        }),
        ops
          ? opsTypeOrmRoot(options.databaseUrl)
          : TypeOrmModule.forRootAsync({
              useFactory: () => ({
                ...typeOrmOptions(options.databaseUrl),
                // Retried: only a database not reachable yet (starting with the app, a failover), about
                // 30 s to 2 min in all with the 10 s connect timeout. A failed migration or the migration
                // lock timing out fails the start at once: a retry would only repeat it.
                retryAttempts: 10,
                retryDelay: 3_000,
                toRetry: isRetryableDataSourceError,
              }),
              // Migrations run here, on one session holding a PostgreSQL advisory lock, not through migrationsRun.
              dataSourceFactory: (dataSourceOptions) => {
                if (!dataSourceOptions) throw new Error('TypeORM options are missing');
                return createMigratedDataSource(dataSourceOptions);
              },
            }),
        // Global: /health reads the worker's own verdict from RetryCycleService.
        NotificationsRetryModule.forRoot({ ...relayOptions, isGlobal: true, extensions }),
        // HTTP only: the CLI opens an application context and never listens.
        ...(ops ? [] : [HealthModule]),
        ...(options.demo ? [DemoModule.forRoot({ seed: !ops })] : []),
        ...(!ops && AdminModule.isEnabled(options.admin)
          ? [AdminModule.forRoot(options.admin ?? {})]
          : []),
      ],
    };
  }
}
