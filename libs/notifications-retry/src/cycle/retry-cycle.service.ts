import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { CycleReport } from '../vocabulary/cycle-report';
import { CallSlots } from './call-slots';
import { ChannelResolver, type ResolvedChannels } from './channel-resolver';
import { ClaimPlanner, type ClaimPlan } from './claim-planner';
import type { ClaimRetry } from './claim-retry';
import { CycleLease } from './cycle-lease';
import { CycleReporter } from './cycle-reporter';
import { CycleReports } from './cycle-reports';
import { CycleStarter, type CycleRun } from './cycle-starter';
import type { CycleState } from './cycle-state';
import { DueRowClaimer, type ClaimResult } from './due-row-claimer';
import { ProviderCallsInFlight } from './provider-calls-in-flight';
import { RetryWorkerState } from './retry-worker-state';
import { RowCensus } from './row-census';
import { RowRunner } from './row-runner';
import { Wakeup } from './wakeup';
import type { LeaseAtStop, RetryWorkerStopReport } from './worker-stop-report';

export interface RunCycleOptions {
  /** The due threshold and the start of backoff. Default: the Clock's now (the database's time). */
  readonly now?: Date;
  /** Stops claiming; calls in flight finish and are written. */
  readonly signal?: AbortSignal;
  /** Carried on every log line and outbox header of the cycle. Default: a new UUID. */
  readonly correlationId?: string;
}

/**
 * The retry cycle (DESIGN §3), top to bottom: acquire the lease → resolve the
 * channels → claim what can start, call, settle, until the batch is done, the
 * backlog drained, the deadline reached or the cycle told to stop → count →
 * release the lease. No connection is held during a provider call. This class
 * only orchestrates: ClaimPlanner decides what to claim, DueRowClaimer claims
 * it, RowRunner calls and settles one row, RowCensus counts, CycleReports and
 * CycleReporter say what happened and keep it in the cycle log. Single-flight
 * per instance.
 */
@Injectable()
export class RetryCycleService implements BeforeApplicationShutdown {
  /** Stops claiming new rows. */
  private readonly shutdown = new AbortController();
  /** Cuts provider calls still in flight once the shutdown grace period is over. */
  private readonly hardStop = new AbortController();
  private running: Promise<CycleReport> | null = null;
  /** The cycle holding the lease now, for what the shutdown drains of it. */
  private current: CycleState | null = null;
  /** What became of the lease of the last cycle run (reset as each one starts). */
  private leaseAtEnd: LeaseAtStop = 'not-held';
  private stopReport: RetryWorkerStopReport | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly lease: CycleLease,
    private readonly channels: ChannelResolver,
    private readonly starter: CycleStarter,
    private readonly planner: ClaimPlanner,
    private readonly claimer: DueRowClaimer,
    private readonly rows: RowRunner,
    private readonly census: RowCensus,
    private readonly reporter: CycleReporter,
    private readonly reports: CycleReports,
    private readonly state: RetryWorkerState,
    private readonly callsInFlight: ProviderCallsInFlight,
  ) {}

  /**
   * Stops claiming at once, lets provider calls in flight finish for
   * `shutdownGraceMs`, then cuts them (their claims are handed back, status
   * and attempts unchanged). Returns when every outcome is written and the
   * lease released, before the DataSource closes; `lastStop` then says what
   * was drained.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.shutdown.abort(new Error('application shutdown'));
    const started = performance.now();
    const callsInFlight = this.callsInFlight.size;
    const running = this.running;
    // The cycle's counts so far: what the stop adds to them is what it drained.
    const before = this.current ? { ...this.current.counts } : null;
    const drained = this.current;
    let callsCut = 0;
    if (running) {
      const grace = setTimeout(() => {
        callsCut = this.callsInFlight.size;
        this.hardStop.abort(new Error('shutdown grace period over'));
      }, this.options.shutdownGraceMs);
      try {
        await running.catch(() => undefined);
      } finally {
        clearTimeout(grace);
      }
    }
    this.stopReport = {
      cycleInFlight: running !== null,
      callsInFlight,
      callsCut,
      rowsWritten: drained && before ? drained.counts.processed - before.processed : 0,
      claimsHandedBack: drained && before ? drained.counts.skipped - before.skipped : 0,
      lease: running ? this.leaseAtEnd : 'not-held',
      durationMs: Math.round(performance.now() - started),
    };
  }

  /** What the last shutdown drained; null before one. */
  get lastStop(): RetryWorkerStopReport | null {
    return this.stopReport;
  }

  /** True while a cycle of this instance is running. */
  get isRunning(): boolean {
    return this.running !== null;
  }

  /**
   * Runs one cycle now, unless this instance is already running one or another
   * instance holds the lease; the report says which.
   */
  runCycle(options: RunCycleOptions = {}): Promise<CycleReport> {
    const run: CycleRun = {
      runId: randomUUID(),
      correlationId: options.correlationId ?? randomUUID(),
      started: performance.now(),
    };
    if (this.running) return Promise.resolve(this.reports.skipped(run, 'already-running'));
    const running = this.execute(run, options).finally(() => {
      this.running = null;
    });
    this.running = running;
    return running;
  }

  private async execute(run: CycleRun, options: RunCycleOptions): Promise<CycleReport> {
    const stop = options.signal
      ? AbortSignal.any([this.shutdown.signal, options.signal])
      : this.shutdown.signal;
    if (stop.aborted) return this.reports.skipped(run, 'cancelled');
    // Until this run holds a lease: an acquire that fails or finds it held leaves none to report.
    this.leaseAtEnd = 'not-held';
    const lease = await this.lease.acquire();
    if (!lease) return this.reports.leaseHeld(run);
    const cycle = this.starter.begin(run, lease, options.now);
    this.current = cycle;

    let report: CycleReport | undefined;
    const onHardStop = (): void => cycle.interrupt.abort(this.hardStop.signal.reason);
    if (this.hardStop.signal.aborted) onHardStop();
    this.hardStop.signal.addEventListener('abort', onHardStop, { once: true });
    try {
      const channels = await this.channels.resolve();
      this.state.pausedChannels = channels.paused;
      await this.work(cycle, channels, stop);
      if (cycle.leaseLoss) this.reporter.leaseLost(cycle, cycle.leaseLoss);
      else await this.census.take(cycle, channels);
      // Logged before the release: once the next owner can start, this cycle is in the log.
      report = await this.reports.completed(cycle);
      return report;
    } catch (error) {
      cycle.span.recordException(error instanceof Error ? error : String(error));
      cycle.span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      cycle.span.end();
      this.hardStop.signal.removeEventListener('abort', onHardStop);
      // After the last write.
      this.leaseAtEnd = await this.lease.release(cycle, report !== undefined);
      this.current = null;
    }
  }

  /**
   * Claim → call → settle until there is nothing more to do. A claim goes out
   * when a fifth of the call slots are free (or none is busy), for no more rows
   * than can start now plus the few that calls will free while the claim is on
   * its way (`ClaimAhead`); each row then runs on its own (`RowRunner`) in a
   * call slot it gives back once its call is decided (`CallSlots`). Rows
   * claimed but not started when the cycle stops are handed back.
   */
  private async work(
    cycle: CycleState,
    channels: ResolvedChannels,
    stop: AbortSignal,
  ): Promise<void> {
    const queue = this.planner.queue(channels);
    const wakeup = new Wakeup(stop);
    const retries = this.planner.retries();
    const slots = new CallSlots(
      this.options.concurrency,
      cycle,
      channels,
      queue,
      this.planner.claimAhead(),
      this.rows,
      wakeup,
      stop,
    );
    const drained = new Set<string>();
    try {
      for (;;) {
        if (stop.aborted) cycle.stop('cancelled');
        else if (performance.now() >= cycle.deadline) cycle.stop('deadline');
        if (cycle.stopReason) break;

        const waitMs = slots.fill();
        await this.rows.handBack(cycle, queue.takeDropped(), 'circuit-open');
        const plan: ClaimPlan = retries.ready
          ? this.planner.next(
              cycle,
              channels,
              queue,
              drained,
              slots.busy,
              slots.free(),
              slots.queueWaitMs(),
            )
          : { claim: null, nextAt: retries.readyAt };
        if (plan.claim) {
          const claimed = await this.claim(cycle, plan.claim, retries);
          if (claimed === 'lease-lost') break;
          if (claimed) {
            for (const channel of claimed.drained) drained.add(channel);
            queue.add(claimed.rows);
          }
          continue;
        }
        // A paced channel's next slot, or a claim to try again, still to come before the deadline.
        const claimInMs = plan.nextAt < cycle.deadline ? plan.nextAt - performance.now() : Infinity;
        if (slots.running.size === 0 && queue.size === 0 && claimInMs === Infinity) {
          cycle.stop(this.planner.idleReason(cycle, channels, drained));
          break;
        }
        await wakeup.wait(
          Math.min(waitMs, Math.max(0, claimInMs), cycle.deadline - performance.now()),
        );
      }
    } finally {
      const closing = slots.close();
      await this.rows.handBack(cycle, queue.takeAll(), cycle.stopReason ?? 'error');
      await closing;
    }
  }

  /**
   * One claim, fenced by the lease. Null when it failed for a passing reason
   * and is to be tried again; 'lease-lost' when the fence refused it.
   */
  private async claim(
    cycle: CycleState,
    claim: NonNullable<ClaimPlan['claim']>,
    retries: ClaimRetry,
  ): Promise<Extract<ClaimResult, { kind: 'claimed' }> | 'lease-lost' | null> {
    const started = performance.now();
    try {
      const result = await this.claimer.claim({
        lease: cycle.lease,
        channels: claim.channels,
        now: cycle.now,
        limit: claim.limit,
        excluded: this.planner.excluded(cycle),
        connectBy: cycle.connectBy,
      });
      retries.succeeded();
      if (result.kind === 'lease-lost') {
        cycle.loseLease(result.cause);
        return 'lease-lost';
      }
      this.reporter.claimed(cycle, performance.now() - started, result.rows);
      cycle.claimed += result.rows.length;
      return result;
    } catch (error) {
      this.reporter.claimFailed(cycle, error, retries.failed(error));
      return null;
    }
  }
}
