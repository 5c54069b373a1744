import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { RetryMetrics } from '../observability/retry-metrics';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type {
  CompletedCycleReport,
  CycleReport,
  CycleSkipReason,
} from '../vocabulary/cycle-report';
import { CycleLog } from './cycle-log';
import { CycleReporter } from './cycle-reporter';
import type { CycleState } from './cycle-state';
import type { CycleRun } from './cycle-starter';
import { RetryWorkerState } from './retry-worker-state';

/** The report `runCycle()` returns, for a cycle that ran and for one that did not. */
@Injectable()
export class CycleReports {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly clock: Clock,
    private readonly reporter: CycleReporter,
    private readonly metrics: RetryMetrics,
    private readonly state: RetryWorkerState,
    private readonly log: CycleLog,
  ) {}

  /** Reported, and kept in the cycle log (a log write that fails is logged, never thrown). */
  async completed(cycle: CycleState): Promise<CompletedCycleReport> {
    const report = this.report(cycle);
    await this.log.record(cycle, report);
    return report;
  }

  private report(cycle: CycleState): CompletedCycleReport {
    const finishedAt = this.clock.now();
    const durationMs = Math.round(performance.now() - cycle.startedAt);
    const stopReason = cycle.stopReason ?? 'no-more-due';
    cycle.span.setAttributes({
      'notifications.stop_reason': stopReason,
      'notifications.processed': cycle.counts.processed,
    });
    const report: CompletedCycleReport = {
      status: 'completed',
      runId: cycle.runId,
      correlationId: cycle.correlationId,
      startedAt: new Date(finishedAt.getTime() - durationMs),
      finishedAt,
      durationMs,
      stopReason,
      fencingToken: cycle.lease.fencingToken,
      counts: { ...cycle.counts },
      excludedChannels: cycle.leaseLoss ? [] : this.state.excludedChannels,
      misconfiguredChannels: cycle.leaseLoss ? [] : this.state.misconfiguredChannels,
      timings: { claim: cycle.timings.claim.timings(), settle: cycle.timings.settle.timings() },
      maxLagMs: cycle.maxLagMs,
    };
    this.state.lastCycle = { at: new Date(), status: 'completed' };
    this.reporter.cycleCompleted(report, this.state.lastCycle.at);
    return report;
  }

  leaseHeld(run: CycleRun): CycleReport {
    this.state.lastCycle = { at: new Date(), status: 'lease-held' };
    // Counted, not stamped: the last-cycle metric moves only on completed cycles, so a lease nobody
    // can take leaves it to age on every instance and the stalled alert fires.
    this.metrics.cycleSkippedForLease();
    // The lease holder reports the channels; this instance's view from an older cycle would stay
    // stale (and keep an alert up after the fix) for as long as it does not hold the lease.
    this.state.misconfiguredChannels = [];
    this.metrics.channelsExcluded(new Map());
    return this.skipped(run, 'lease-held');
  }

  skipped(run: CycleRun, skipReason: CycleSkipReason): CycleReport {
    this.reporter.skipped(run.runId, run.correlationId, skipReason, this.options.lockKey);
    const finishedAt = this.clock.now();
    const durationMs = Math.round(performance.now() - run.started);
    return {
      status: 'skipped',
      skipReason,
      runId: run.runId,
      correlationId: run.correlationId,
      startedAt: new Date(finishedAt.getTime() - durationMs),
      finishedAt,
      durationMs,
    };
  }
}
