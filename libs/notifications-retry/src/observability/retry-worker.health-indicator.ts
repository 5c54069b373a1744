import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { RetryCycleService } from '../cycle/retry-cycle.service';

/**
 * Terminus view of the worker's own verdict: down when no cycle completed (or
 * was rightly skipped for another instance's lease) within a few schedule
 * intervals. The backlog and the channels left out for a configuration reason
 * ride along as details: a misconfigured channel is for an operator to fix,
 * not a reason for the orchestrator to restart the instance.
 *
 * Exported by the module; a host's health controller injects it next to its
 * other Terminus indicators: `() => this.retryWorker.check('retryWorker')`.
 */
@Injectable()
export class RetryWorkerHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly cycles: RetryCycleService,
  ) {}

  check(key: string): HealthIndicatorResult {
    const session = this.indicators.check(key);
    const health = this.cycles.health();
    const details = {
      enabled: health.enabled,
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
