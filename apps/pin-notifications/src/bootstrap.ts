import { Module, type DynamicModule, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { parseAppConfig } from './config/app-config';
import { unknownEnvironmentVariables } from './config/unknown-environment-variables';
import { resolveAppDatabase } from './database/app-database';
import { stopHostOnSignals } from './host-stop';
import { createRootLogger } from './logging/root-logger';

export interface HostBootstrapOptions {
  /** Where the configuration is read from (`process.env` in production). */
  readonly env: NodeJS.ProcessEnv;
  /**
   * Modules imported next to AppModule: a team's adapters, as a test host
   * registers them. `main.ts` adds none.
   */
  readonly imports?: ReadonlyArray<Type | DynamicModule>;
}

/**
 * Starts the host app the way production runs it: configuration from the
 * environment, the database (embedded when there is no DATABASE_URL), JSON
 * logs, HTTP on PORT; SIGTERM/SIGINT stop the app, then the embedded
 * database, with one `app-stopped` line (host-stop.ts).
 */
export async function bootstrapHost(options: HostBootstrapOptions): Promise<INestApplication> {
  const config = parseAppConfig(options.env);
  const rootLogger = createRootLogger(config.logLevel);
  const log = rootLogger.child({ context: 'Bootstrap' });
  const unknown = unknownEnvironmentVariables(options.env);
  if (unknown.length > 0) {
    // Names only: a value may be a secret.
    log.warn({
      msg: 'unknown-environment-variables',
      event: 'unknown-environment-variables',
      variables: unknown.map((variable) => variable.name),
      didYouMean: Object.fromEntries(
        unknown.filter((v) => v.didYouMean).map((v) => [v.name, v.didYouMean]),
      ),
      note: 'not read by the app (a typo?); docs/configuration.md lists the variables it reads',
    });
  }

  const database = await resolveAppDatabase(config.databaseUrl, log);
  // Demo rows go into the throw-away database by default, into any other only when asked for.
  const demo = config.seedDemoData ?? database.embedded;

  let app: INestApplication | undefined;
  try {
    @Module({
      imports: [
        AppModule.forRoot({
          // The embedded database is stopped by stopHostOnSignals, after every module's hooks.
          databaseUrl: database.url,
          retryWorker: config.retryWorker,
          outboxRelay: config.outboxRelay,
          demo,
          logger: rootLogger,
          admin: { token: config.adminToken },
        }),
        ...(options.imports ?? []),
      ],
    })
    class HostModule {}

    app = await NestFactory.create(
      HostModule,
      // abortOnError false: a failed start must still reach the catch below and stop the database.
      { bufferLogs: true, abortOnError: false },
    );
    app.useLogger(app.get(Logger));

    database.handOverSignals();
    stopHostOnSignals(app, database, log);

    await app.listen(config.port);
    const port = Number(new URL(await app.getUrl()).port);
    log.info({
      msg: 'app-listening',
      event: 'app-listening',
      port,
      embeddedDatabase: database.embedded,
      demoData: demo,
      adminPage: config.adminToken !== null,
      retryWorkerEnabled: config.retryWorker.enabled ?? true,
    });
    const nats = config.outboxRelay.nats;
    if (nats) {
      log.info({
        msg: 'outbox-relay-on',
        event: 'outbox-relay-on',
        publisher: 'nats-jetstream',
        servers: nats.servers.map(withoutPassword),
        subjectPrefix: nats.subjectPrefix ?? null,
        stream: nats.stream ?? null,
        createStream: nats.createStream ?? false,
        retentionDays: config.outboxRelay.retentionDays,
      });
    } else {
      log.info({
        msg: 'outbox-relay-off',
        event: 'outbox-relay-off',
        reason:
          'NATS_URL is not set: pin.notifications.dispatched.v1 events stay in notification_outbox unpublished',
      });
    }
    return app;
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database.stop();
    throw error;
  }
}

function withoutPassword(server: string): string {
  const url = new URL(server);
  if (url.password) url.password = '***';
  return url.toString();
}

/** The last line of a start that failed: name, message and stack only (a driver error's other fields may hold query parameters). */
export function exitOnStartupFailure(error: unknown): never {
  createRootLogger('info').fatal({
    msg: 'startup-failed',
    event: 'startup-failed',
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  process.exit(1);
}
