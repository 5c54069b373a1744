import { hostname } from 'node:os';
import {
  Inject,
  type Abstract,
  Injectable,
  Module,
  type INestApplicationContext,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import {
  NOTIFICATIONS_RETRY_OPS_OPTIONS,
  type NotificationsRetryOpsOptions,
} from './notifications-retry-ops-options';
import { cliActor } from './cli-actor';
import { OpsDatabaseUnreachableError } from './ops-database-unreachable.error';
import { unreachableDatabaseCause } from './unreachable-database-cause';
import type { NotificationsRetryOpsOverrides } from './ops-host';
import { OpsHostModuleError } from './ops-host-module.error';
import { OPS_IO, type OpsIo } from './ops-io';
import { StderrLogger } from './stderr-logger';

/**
 * The host's module graph, opened only when a command needs it: `--help` and a
 * bad command line never connect. Built by the host's own factory (its
 * adapters, catalog, extensions), with the schedule and the relay off: the CLI
 * never runs cycles of its own accord, and never migrates (the deploy does).
 */
@Injectable()
export class OpsWorkspace implements OnApplicationShutdown {
  private context: Promise<INestApplicationContext> | null = null;
  private drain = false;

  constructor(
    @Inject(NOTIFICATIONS_RETRY_OPS_OPTIONS) private readonly options: NotificationsRetryOpsOptions,
    @Inject(OPS_IO) private readonly io: OpsIo,
  ) {}

  async get<T>(type: Type<T> | Abstract<T>): Promise<T> {
    this.context ??= this.open();
    return (await this.context).get(type, { strict: false });
  }

  /** Cycles run from this workspace keep claiming full batches (the module's `drain` option); set before the first get(). */
  enableDrain(): void {
    if (this.context) throw new Error('enableDrain() must come before the workspace is opened');
    this.drain = true;
  }

  /** Who the audit records when `--actor` is not given. */
  defaultActor(): string {
    return this.options.defaultActor?.() ?? cliActor(process.env.USER);
  }

  async onApplicationShutdown(): Promise<void> {
    const context = this.context;
    this.context = null;
    if (context) await (await context.catch(() => null))?.close();
  }

  private async open(): Promise<INestApplicationContext> {
    const retry: NotificationsRetryOpsOverrides = {
      enabled: false,
      drain: this.drain,
      instanceId: `ops-cli:${hostname()}:${process.pid}`,
      outboxRelay: { enabled: false },
    };
    try {
      const host = await this.options.host({ retry, stderr: this.io.stderr });
      @Module({
        imports: [host],
        providers: [{ provide: OPS_OVERRIDES, useValue: retry }, OpsOverridesCheck],
      })
      class OpsHostRoot {}
      return await NestFactory.createApplicationContext(OpsHostRoot, {
        logger: new StderrLogger(this.io.stderr),
        abortOnError: false,
      });
    } catch (error) {
      const cause = unreachableDatabaseCause(error);
      if (cause !== null) throw new OpsDatabaseUnreachableError(cause);
      throw error;
    }
  }
}

const OPS_OVERRIDES = Symbol('OPS_OVERRIDES');

/**
 * A host factory that forgot the overrides would run a worker and a relay
 * inside an operator's shell. Checked at module init, before any bootstrap
 * hook (where the schedule and the relay start) has run.
 */
@Injectable()
class OpsOverridesCheck implements OnModuleInit {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(OPS_OVERRIDES) private readonly retry: NotificationsRetryOpsOverrides,
  ) {}

  onModuleInit(): void {
    let resolved: ResolvedNotificationsRetryOptions;
    try {
      resolved = this.moduleRef.get<ResolvedNotificationsRetryOptions>(
        RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
        { strict: false },
      );
    } catch {
      throw new OpsHostModuleError(
        'the host module built for the ops CLI has no NotificationsRetryModule: import NotificationsRetryModule.forRoot() in it',
      );
    }
    const retry = this.retry;
    const wrong = [
      resolved.enabled !== false ? `enabled is ${String(resolved.enabled)} (must be false)` : null,
      resolved.outboxRelay.enabled ? 'outboxRelay.enabled is true (must be false)' : null,
      resolved.drain !== retry.drain
        ? `drain is ${String(resolved.drain)} (the command asked for ${String(retry.drain)})`
        : null,
      resolved.instanceId !== retry.instanceId
        ? `instanceId is ${JSON.stringify(resolved.instanceId)} (must be ${JSON.stringify(retry.instanceId)})`
        : null,
    ].filter((problem): problem is string => problem !== null);
    if (wrong.length > 0) {
      throw new OpsHostModuleError(
        `the host module built for the ops CLI does not apply the CLI's overrides: ${wrong.join('; ')}. Spread context.retry last into NotificationsRetryModule.forRoot() options`,
      );
    }
  }
}
