import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import {
  NotificationProvider,
  NotificationsRetryModule,
  notificationsRetryEntities,
  ProviderAdapter,
  RetryCycleService,
  type OutgoingNotification,
  type SendResult,
} from '../../libs/notifications-retry/src';
import { BENCH_PROVIDER_KEY } from './bench-database';
import type { CellResult } from './cell-result';
import { CountingLogger } from './counting-logger';
import { fakeProvider } from './fake-provider';
import { warmPool } from './warm-pool';

/** A team's adapter, found by the module through @NotificationProvider like any other. */
@Injectable()
@NotificationProvider(BENCH_PROVIDER_KEY)
export class BenchProviderAdapter extends ProviderAdapter {
  async send(message: OutgoingNotification): Promise<SendResult> {
    return { providerMessageId: await fakeProvider.send(message.id) };
  }
}

@Module({ providers: [BenchProviderAdapter] })
class BenchAdaptersModule {}

@Module({})
class BenchHostModule {}

export interface OurCycleAppOptions {
  readonly url: string;
  /** The TypeORM pool's `extra.max`: every connection the library and its host may open. */
  readonly poolSize: number;
  readonly concurrency: number;
  readonly batchSize: number;
  /** Drain mode: claim again within the cycle while batches come back full. */
  readonly drain: boolean;
}

export interface OurCycleApp {
  readonly cycles: RetryCycleService;
  readonly dataSource: DataSource;
  readonly logger: CountingLogger;
  close(): Promise<void>;
}

/**
 * A Nest application context assembled as the host assembles it: its TypeORM
 * root (one pool of `poolSize`), the retry module with its schedule off, and a
 * team module declaring the adapter. Start-up checks run as in the host: a
 * rejected configuration throws here.
 */
export async function startOurCycleApp(options: OurCycleAppOptions): Promise<OurCycleApp> {
  const logger = new CountingLogger();
  // Kept so that a start-up check that rejects the configuration does not leave the pool open.
  let opened: DataSource | null = null;
  let initializing: Promise<DataSource> | null = null;
  const root: DynamicModule = {
    module: BenchHostModule,
    imports: [
      TypeOrmModule.forRootAsync({
        useFactory: () => ({
          type: 'postgres' as const,
          url: options.url,
          entities: notificationsRetryEntities,
          migrationsRun: false,
          synchronize: false,
          logging: false,
          extra: {
            max: options.poolSize,
            connectionTimeoutMillis: 10_000,
            keepAlive: true,
          },
        }),
        dataSourceFactory: async (dataSourceOptions) => {
          if (!dataSourceOptions) throw new Error('TypeORM options missing');
          opened = new DataSource(dataSourceOptions);
          initializing = opened.initialize();
          return initializing;
        },
      }),
      NotificationsRetryModule.forRoot({
        enabled: false,
        concurrency: options.concurrency,
        batchSize: options.batchSize,
        drain: options.drain,
      }),
      BenchAdaptersModule,
    ],
  };
  const app = await NestFactory.createApplicationContext(root, {
    logger,
    abortOnError: false,
  }).catch(async (error: unknown) => {
    // A check may reject the configuration while the DataSource is still connecting: wait for it.
    await initializing?.catch(() => undefined);
    if (opened?.isInitialized) await opened?.destroy();
    throw error;
  });
  const dataSource = app.get(DataSource);
  // TypeORM's postgres driver keeps its pg.Pool as `master`.
  await warmPool(
    (dataSource.driver as unknown as { master: Pool }).master,
    Math.min(options.poolSize, options.concurrency + 1),
  ).catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  return {
    cycles: app.get(RetryCycleService),
    dataSource,
    logger,
    close: () => app.close(),
  };
}

export interface DrainResult extends CellResult {
  readonly cycles: number;
  /** The last cycle found no more due rows (rather than being stopped by the signal). */
  readonly ranDry: boolean;
}

/**
 * Runs cycles back to back until one finds no more due rows or `signal` fires
 * (then the cycle stops claiming at the next row boundary and the rows in
 * flight finish: the library's own cooperative stop). In drain mode one cycle
 * claims batch after batch; without it each cycle takes one batch.
 */
export async function drainWithCycles(
  app: OurCycleApp,
  signal?: AbortSignal,
): Promise<DrainResult> {
  const started = performance.now();
  let processed = 0;
  let errors = 0;
  let cycles = 0;
  let ranDry = false;
  for (;;) {
    const report = await app.cycles.runCycle(signal ? { signal } : {});
    cycles++;
    if (report.status !== 'completed') {
      throw new Error(`cycle skipped (${report.skipReason}) during the benchmark`);
    }
    processed += report.counts.processed;
    errors += report.counts.errors;
    if (report.stopReason === 'lease-lost') throw new Error('lease lost during the benchmark');
    if (report.stopReason === 'no-more-due' && !signal?.aborted) {
      ranDry = true;
      break;
    }
    if (report.stopReason === 'cancelled' || signal?.aborted) break;
  }
  if (errors > 0) {
    throw new Error(
      `our cycle reported ${errors} item errors: ${JSON.stringify(app.logger.errors)}`,
    );
  }
  return { processed, errors, cycles, ranDry, elapsedMs: performance.now() - started };
}
