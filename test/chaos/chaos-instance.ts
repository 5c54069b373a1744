/**
 * One instance of the chaos run: the Pin notifications host app (the real
 * AppModule: TypeORM root, nestjs-pino JSON logs on stdout, /metrics, /health,
 * the retry module) plus a team module with fault-injecting adapters, on a
 * one-second schedule. Started by `run-chaos.ts` as a child process, from a
 * copy of the repository compiled to JavaScript once per run
 * (test/support/compiled-copy.ts), as a host deploys it:
 *
 *   TS_NODE_PROJECT=<copy>/tsconfig.json node -r tsconfig-paths/register <copy>/test/chaos/chaos-instance.js
 *
 * with its configuration in CHAOS_INSTANCE_CONFIG and PGAPPNAME set to its
 * instance id. Spans go to a JSON-lines file; the Prometheus registry is
 * dumped to a file every second and once more at shutdown.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Logger } from 'nestjs-pino';
import { register } from 'prom-client';
import { AppModule } from '../../apps/pin-notifications/src/app.module';
import { createRootLogger } from '../../apps/pin-notifications/src/logging/root-logger';
import { CallLedger } from './call-ledger';
import {
  CHAOS_CHANNELS,
  CHAOS_STREAM,
  CHAOS_WORKER,
  readInstanceConfig,
  type InstanceConfig,
} from './chaos-config';
import { CHAOS_SEED, faultInjectingAdapterFor } from './fault-injecting.provider-adapter';
import { FileSpanExporter } from './file-span-exporter';

const METRICS_DUMP_INTERVAL_MS = 1_000;

async function dumpMetrics(file: string): Promise<void> {
  writeFileSync(file, await register.metrics());
}

/** Closes the ledger and writes the last metric dump once the worker has finished its rows. */
@Injectable()
class ChaosInstanceShutdown implements OnApplicationShutdown {
  constructor(
    private readonly ledger: CallLedger,
    @Inject('CHAOS_METRICS_FILE') private readonly metricsFile: string,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await dumpMetrics(this.metricsFile);
    await this.ledger.close();
  }
}

/** The team module: the fault-injecting adapters, one per provider key of the chaos channels. */
function chaosAdaptersModule(config: InstanceConfig): DynamicModule {
  @Module({})
  class ChaosAdaptersModule {}
  return {
    module: ChaosAdaptersModule,
    providers: [
      { provide: CallLedger, useValue: new CallLedger(config.databaseUrl, config.instanceId) },
      { provide: CHAOS_SEED, useValue: config.seed },
      { provide: 'CHAOS_METRICS_FILE', useValue: config.metricsFile },
      ChaosInstanceShutdown,
      ...CHAOS_CHANNELS.map((channel) => faultInjectingAdapterFor(channel.providerKey)),
    ],
  };
}

async function main(): Promise<void> {
  const config = readInstanceConfig(process.env);
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new FileSpanExporter(config.spansFile))],
  });
  trace.setGlobalTracerProvider(tracerProvider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());

  const rootLogger = createRootLogger('info');
  @Module({
    imports: [
      AppModule.forRoot({
        databaseUrl: config.databaseUrl,
        demo: false,
        // Every instance relays the outbox too: killed, stopped and cut off like the cycle.
        outboxRelay: config.natsUrl
          ? {
              nats: { servers: [config.natsUrl], subjectPrefix: undefined, stream: CHAOS_STREAM },
              retentionDays: 7,
            }
          : undefined,
        logger: rootLogger,
        retryWorker: {
          enabled: true,
          cron: CHAOS_WORKER.cron,
          batchSize: config.batchSize,
          drain: true,
          concurrency: config.concurrency,
          lockTtlMs: CHAOS_WORKER.lockTtlMs,
          maxCycleDurationMs: CHAOS_WORKER.maxCycleDurationMs,
          shutdownGraceMs: CHAOS_WORKER.shutdownGraceMs,
          settleMarginMs: CHAOS_WORKER.settleMarginMs,
          instanceId: config.instanceId,
          circuitBreaker: { resetTimeoutMs: 1_000, rollingWindowMs: 10_000 },
          // Claims of a killed or stopped relay lapse within seconds, as the cycle's do here.
          outboxRelay: {
            pollIntervalMs: 500,
            publishTimeoutMs: 3_000,
            claimTtlMs: 6_000,
            backoffMaxMs: 2_000,
          },
        },
      }),
      chaosAdaptersModule(config),
    ],
  })
  class ChaosInstanceModule {}

  const app = await NestFactory.create(ChaosInstanceModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.listen(0, '127.0.0.1');
  const timer = setInterval(() => void dumpMetrics(config.metricsFile), METRICS_DUMP_INTERVAL_MS);
  timer.unref();
  rootLogger.info({
    msg: 'chaos-instance-ready',
    event: 'chaos-instance-ready',
    instanceId: config.instanceId,
    url: await app.getUrl(),
  });
}

main().catch((error: unknown) => {
  createRootLogger('info').fatal({
    msg: 'chaos-instance-failed',
    event: 'chaos-instance-failed',
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  process.exit(1);
});
