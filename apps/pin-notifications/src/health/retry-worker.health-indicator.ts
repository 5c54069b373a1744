import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { RetryCycleService } from '@pin/notifications-retry';

/**
 * Terminus view of the worker's own verdict: down when no cycle completed (or
 * was rightly skipped for another instance's lease) within a few schedule
 * intervals; the backlog rides along as detail.
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
      ...(health.reason ? { reason: health.reason } : {}),
    };
    return health.healthy ? session.up(details) : session.down(details);
  }
}
