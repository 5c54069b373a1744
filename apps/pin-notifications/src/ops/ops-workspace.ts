import { hostname, userInfo } from 'node:os';
import {
  Inject,
  Injectable,
  Module,
  type INestApplicationContext,
  type OnApplicationShutdown,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NotificationsRetryModule } from '@pin/notifications-retry';
import { parseAppConfig } from '../config/app-config';
import { typeOrmOptions } from '../database/typeorm-options';
import { OpsArgumentError } from './ops-argument.error';
import { OPS_IO, type OpsIo } from './ops-io';
import { OPS_SETTINGS, type OpsSettings } from './ops-settings';
import { StderrLogger } from './stderr-logger';

/**
 * The app's database and the retry module's services, opened only when a
 * command needs them: `--help` and a bad command line never connect. Built
 * from the app's own configuration (`DATABASE_URL`, `RETRY_*`), with the
 * schedule off: the CLI never runs cycles of its own accord, and never
 * migrates (that is the deploy's job).
 */
@Injectable()
export class OpsWorkspace implements OnApplicationShutdown {
  private context: Promise<INestApplicationContext> | null = null;
  private drain = false;

  constructor(
    @Inject(OPS_SETTINGS) private readonly settings: OpsSettings,
    @Inject(OPS_IO) private readonly io: OpsIo,
  ) {}

  async get<T>(type: Type<T>): Promise<T> {
    this.context ??= this.open();
    return (await this.context).get(type);
  }

  /** Cycles run from this workspace keep claiming full batches (the module's `drain` option); set before the first get(). */
  enableDrain(): void {
    if (this.context) throw new Error('enableDrain() must come before the workspace is opened');
    this.drain = true;
  }

  /** Who the audit records when `--actor` is not given. */
  defaultActor(): string {
    const user = this.settings.env.USER ?? safeUserName();
    return `cli:${user}@${hostname()}`;
  }

  async onApplicationShutdown(): Promise<void> {
    const context = this.context;
    this.context = null;
    if (context) await (await context.catch(() => null))?.close();
  }

  private async open(): Promise<INestApplicationContext> {
    const config = parseAppConfig(this.settings.env);
    if (config.databaseUrl === null) {
      throw new OpsArgumentError(
        "DATABASE_URL is not set: the ops CLI works on the app's database (set it as for the app; an embedded database would be empty)",
      );
    }
    @Module({
      imports: [
        ScheduleModule.forRoot(),
        TypeOrmModule.forRoot(typeOrmOptions(config.databaseUrl, config.retryWorker.concurrency)),
        NotificationsRetryModule.forRoot({
          ...config.retryWorker,
          enabled: false,
          ...(this.drain ? { drain: true } : {}),
          instanceId: `ops-cli:${hostname()}:${process.pid}`,
        }),
        ...(this.settings.imports ?? []),
      ],
    })
    class OpsDatabaseModule {}
    return NestFactory.createApplicationContext(OpsDatabaseModule, {
      logger: new StderrLogger(this.io.stderr),
      abortOnError: false,
    });
  }
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
