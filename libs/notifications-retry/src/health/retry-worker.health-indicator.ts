import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { RetryWorkerHealthService } from './retry-worker-health.service';

/**
 * Terminus view of the worker's verdict (RetryWorkerHealthService): down
 * when no instance has completed a cycle within `healthStaleMultiple`
 * schedule intervals, as the lease row in the database records it, whatever
 * this instance's own ticks say, and down with the database's error when that
 * record cannot be read. Answers within about a second: the read never waits
 * for the lease row's lock, and is given up on when it hangs. The backlog and
 * the channels left out for a configuration reason ride along as details: a
 * misconfigured channel is for an operator to fix, not a reason for the
 * orchestrator to restart the instance.
 *
 * Exported by the module; a host's health controller injects it next to its
 * other Terminus indicators: `() => this.retryWorker.check('retryWorker')`.
 */
@Injectable()
export class RetryWorkerHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly workerHealth: RetryWorkerHealthService,
  ) {}

  async check(key: string): Promise<HealthIndicatorResult> {
    const session = this.indicators.check(key);
    const health = await this.workerHealth.health();
    const details = {
      enabled: health.enabled,
      lastCompletedAt: health.lastCompletedAt?.toISOString() ?? null,
      lastCompletedBy: health.lastCompletedBy,
      lastCycleAt: health.lastCycleAt?.toISOString() ?? null,
      lastCycleStatus: health.lastCycleStatus,
      staleAfterMs: health.staleAfterMs,
      failedBacklog: health.failedBacklog,
      misconfiguredChannels: health.misconfiguredChannels,
      pausedChannels: health.pausedChannels,
      ...(health.reason ? { reason: health.reason } : {}),
    };
    return health.healthy ? session.up(details) : session.down(details);
  }
}
