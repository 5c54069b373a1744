import type { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Logger } from 'nestjs-pino';
import type pino from 'pino';
import { DataSource } from 'typeorm';
import { RetryCycleService, RetryWorkerHealthService } from '@pin/notifications-retry';
import type { AdminModuleOptions } from '../../apps/pin-notifications/src/admin/admin-settings';
import { AppModule } from '../../apps/pin-notifications/src/app.module';
import type {
  LogLevel,
  RetryWorkerOptions,
} from '../../apps/pin-notifications/src/config/app-config';
import type { OutboxRelayConfig } from '../../apps/pin-notifications/src/config/outbox-relay-config';
import { createRootLogger } from '../../apps/pin-notifications/src/logging/root-logger';
import { adaptersModule } from './retry-test-app';

export interface HostTestAppOptions {
  readonly databaseUrl: string;
  readonly retryWorker: RetryWorkerOptions;
  /** Provider adapters registered in a team module next to the host's, as a team would. */
  readonly adapters?: Provider[];
  /** Root logger level; default info. */
  readonly logLevel?: LogLevel;
  /** The admin page: off unless a token or an AdminAccess provider is given. */
  readonly admin?: AdminModuleOptions;
  /** The outbox relay as the environment would configure it; default off. */
  readonly outboxRelay?: OutboxRelayConfig;
}

export interface HostTestApp {
  readonly app: INestApplication;
  /** http://127.0.0.1:<port>, the app listening on an ephemeral port. */
  readonly baseUrl: string;
  readonly dataSource: DataSource;
  readonly cycles: RetryCycleService;
  /** The worker's verdict, as /health reads it. */
  readonly workerHealth: RetryWorkerHealthService;
  /** Every raw line the root logger wrote, exactly as it would reach stdout. */
  readonly logLines: string[];
  /** The raw lines parsed as JSON (each must be one JSON object). */
  logEntries(): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * The host app as `main.ts` assembles it (minus the embedded database), with
 * its root logger writing into memory instead of stdout.
 *
 * Boot it at most once per test file: `AppModule.forRoot()` registers
 * prom-client's default metrics in the process-wide registry, and a second
 * registration in the same module registry throws "already been registered".
 */
export async function startHostApp(options: HostTestAppOptions): Promise<HostTestApp> {
  const logLines: string[] = [];
  const destination: pino.DestinationStream = { write: (line: string) => void logLines.push(line) };
  const moduleRef = await Test.createTestingModule({
    imports: [
      AppModule.forRoot({
        databaseUrl: options.databaseUrl,
        demo: false,
        retryWorker: options.retryWorker,
        outboxRelay: options.outboxRelay,
        logger: createRootLogger(options.logLevel ?? 'info', destination),
        ...(options.admin ? { admin: options.admin } : {}),
      }),
      adaptersModule(options.adapters ?? []),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ bufferLogs: true });
  app.useLogger(app.get(Logger));
  await app.listen(0);
  const baseUrl = `http://127.0.0.1:${new URL(await app.getUrl()).port}`;
  return {
    app,
    baseUrl,
    dataSource: app.get(DataSource),
    cycles: app.get(RetryCycleService),
    workerHealth: app.get(RetryWorkerHealthService),
    logLines,
    logEntries: () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>),
    close: () => app.close(),
  };
}
