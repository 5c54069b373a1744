import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { parseAppConfig } from './config/app-config';
import { resolveAppDatabase } from './database/app-database';
import { createRootLogger } from './logging/root-logger';

async function bootstrap(): Promise<void> {
  const config = parseAppConfig(process.env);
  const rootLogger = createRootLogger(config.logLevel);
  const log = rootLogger.child({ context: 'Bootstrap' });

  const database = await resolveAppDatabase(config.databaseUrl, log);
  // Demo rows go into the throw-away database by default, into any other only when asked for.
  const demo = config.seedDemoData ?? database.embedded;

  let app: INestApplication | undefined;
  try {
    app = await NestFactory.create(
      AppModule.forRoot({
        databaseUrl: database.url,
        stopDatabase: database.embedded ? database.stop : undefined,
        retryWorker: config.retryWorker,
        demo,
        logger: rootLogger,
      }),
      // abortOnError false: a failed start must still reach the catch below and stop the database.
      { bufferLogs: true, abortOnError: false },
    );
    app.useLogger(app.get(Logger));

    database.handOverSignals();
    // process.exit(0) once the hooks are done, rather than re-raising the signal:
    // the exit code says the shutdown was clean, and pino flushes on 'exit'.
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });

    await app.listen(config.port);
    const port = Number(new URL(await app.getUrl()).port);
    log.info({
      msg: 'app-listening',
      event: 'app-listening',
      port,
      embeddedDatabase: database.embedded,
      demoData: demo,
      retryWorkerEnabled: config.retryWorker.enabled ?? true,
    });
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database.stop();
    throw error;
  }
}

bootstrap().catch((error: unknown) => {
  // Name, message and stack only: a driver error's other fields may hold query parameters.
  createRootLogger('info').fatal({
    msg: 'startup-failed',
    event: 'startup-failed',
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  process.exit(1);
});
