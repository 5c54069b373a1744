import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { errorText } from '../vocabulary/error-text';
import { isConnectionLost, sqlState } from '../persistence/database-error-kind';
import { CatalogStartCheck } from './catalog-start-check';
import { RetryCycleService } from './retry-cycle.service';

export const RETRY_CYCLE_JOB_NAME = 'notifications-retry-cycle';

/**
 * Puts the cycle on the configured UTC schedule. Registered dynamically (not
 * with `@Cron`) because the expression and the on/off switch are options. When
 * the host imports `ScheduleModule.forRoot()`, the job is listed in its
 * SchedulerRegistry like any other; without it the job runs all the same.
 */
@Injectable()
export class RetryCycleScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('NotificationsRetryScheduler');
  private job: CronJob | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly cycles: RetryCycleService,
    private readonly catalogCheck: CatalogStartCheck,
    @Optional() private readonly registry?: SchedulerRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.enabled) {
      this.logger.log({ msg: 'retry-worker-disabled', event: 'retry-worker-disabled' });
      return;
    }
    // Only where the worker runs: instances that merely import the module must not fail on a table row.
    await this.catalogCheck.run();
    this.job = CronJob.from({
      cronTime: this.options.cron,
      timeZone: 'UTC',
      start: false,
      onTick: () => this.tick(),
    });
    this.registry?.addCronJob(RETRY_CYCLE_JOB_NAME, this.job);
    this.job.start();
    this.logger.log({
      msg: 'retry-worker-scheduled',
      event: 'retry-worker-scheduled',
      cron: this.options.cron,
      instanceId: this.options.instanceId,
    });
  }

  beforeApplicationShutdown(): void {
    if (!this.job) return;
    void this.job.stop();
    this.registry?.deleteCronJob(RETRY_CYCLE_JOB_NAME);
    this.job = null;
  }

  private async tick(): Promise<void> {
    try {
      await this.cycles.runCycle();
    } catch (error) {
      // A failed cycle (database down, ...) leaves every row as it was; the next tick tries again.
      this.logger.error({
        msg: 'cycle-failed',
        event: 'cycle-failed',
        // Said outright: a database that refuses connections reads as such, not as a stalled worker.
        cause: isConnectionLost(error) ? 'database-unreachable' : 'error',
        code: sqlState(error),
        error: errorText(error),
      });
    }
  }
}
