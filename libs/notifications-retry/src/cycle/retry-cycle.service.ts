import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { ChannelCatalog, readCatalogChannels } from '../channels/channel-catalog';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { Clock } from '../clock/clock';
import { InsufficientPoolSizeError } from '../errors/insufficient-pool-size.error';
import { LeaseLostError } from '../errors/lease-lost.error';
import { MissingProviderAdapterError } from '../errors/missing-provider-adapter.error';
import { DistributedLock } from '../locking/distributed-lock';
import type { Lease } from '../locking/lease';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../notifications-retry.module-definition';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RetryMetrics } from '../observability/retry-metrics';
import type { RetryWorkerHealth } from '../observability/retry-worker-health';
import { NotificationRepository, type ChannelQuota } from '../persistence/notification.repository';
import { PreparedStatementMode } from '../persistence/prepared-statement-mode';
import { ProviderAdapterRegistry } from '../providers/provider-adapter.registry';
import { ChannelPacer } from './channel-pacer';
import type { CycleContext, EligibleChannel } from './cycle-context';
import type {
  ChannelExclusionReason,
  CycleReport,
  CycleSkipReason,
  CycleStopReason,
  MisconfiguredChannel,
} from './cycle-report';
import { DispatchQueue } from './dispatch-queue';
import { channelExclusions, leaseAllowanceMs, type ChannelExclusions } from './channel-exclusions';
import { errorText } from './error-text';
import { TimingTally } from './timing-tally';
import { ProviderCallsInFlight } from './provider-calls-in-flight';
import { RowProcessor } from './row-processor';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
// OPERATIONS HOOK (issue 13): channel pauses are read once per cycle in resolveChannels().
import { ChannelPauses } from '../operations/channel-pauses';

export interface RunCycleOptions {
  /** The due threshold. Default: the injected Clock's now. */
  readonly now?: Date;
  /** Stops the cycle at the next item boundary. */
  readonly signal?: AbortSignal;
  /** Carried on every log line and outbox header of the cycle. Default: a new UUID. */
  readonly correlationId?: string;
}

const DEFAULT_PG_POOL_SIZE = 10;
const tracer = trace.getTracer('@pin/notifications-retry');

/**
 * One retry cycle: lease → channels → claim and process due rows, each in its
 * own transaction → release. Single-flight per instance; cancellation is
 * cooperative and lands between rows, never inside one.
 */
@Injectable()
export class RetryCycleService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('NotificationsRetryCycle');
  /** Stops claiming new rows. */
  private readonly shutdown = new AbortController();
  /** Cuts provider calls still in flight once the shutdown grace period is over. */
  private readonly hardStop = new AbortController();
  private running: Promise<CycleReport> | null = null;
  // Wall-clock time, not the injectable Clock: health is about the process, whatever "now" tests use.
  private readonly startedAt = new Date();
  private lastCycle: { at: Date; status: 'completed' | 'lease-held' } | null = null;
  private failedBacklog: number | null = null;
  private misconfiguredChannels: readonly MisconfiguredChannel[] = [];
  private pausedChannels: readonly string[] = [];
  /**
   * A lease this instance could not release (the database was gone when its
   * cycle ended). Released before the next acquire, so the worker resumes on
   * its next tick instead of waiting out the TTL behind its own stale lease.
   */
  private unreleased: Lease | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    private readonly lock: DistributedLock,
    private readonly catalog: ChannelCatalog,
    private readonly adapters: ProviderAdapterRegistry,
    private readonly notifications: NotificationRepository,
    private readonly clock: Clock,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly metrics: RetryMetrics,
    private readonly rows: RowProcessor,
    private readonly pacer: ChannelPacer,
    private readonly callsInFlight: ProviderCallsInFlight,
    private readonly preparedStatements: PreparedStatementMode,
    private readonly pauses: ChannelPauses,
  ) {
    circuits.onStateChange((providerKey, state) => metrics.circuit(providerKey, state));
  }

  /**
   * Healthy when the worker is off, or when a cycle completed (or was rightly
   * skipped for another instance's lease) within `healthStaleMultiple` schedule
   * intervals. A fresh instance gets the same allowance from its start.
   */
  health(now: Date = new Date()): RetryWorkerHealth {
    const staleAfterMs = this.options.scheduleIntervalMs * this.options.healthStaleMultiple;
    const base = {
      enabled: this.options.enabled,
      lastCycleAt: this.lastCycle?.at ?? null,
      lastCycleStatus: this.lastCycle?.status ?? null,
      staleAfterMs,
      failedBacklog: this.failedBacklog,
      misconfiguredChannels: this.misconfiguredChannels,
      pausedChannels: this.pausedChannels,
    };
    if (!this.options.enabled)
      return { ...base, healthy: true, reason: 'worker disabled on this instance' };
    const since = (this.lastCycle?.at ?? this.startedAt).getTime();
    if (now.getTime() - since > staleAfterMs) {
      return { ...base, healthy: false, reason: `no cycle for more than ${staleAfterMs} ms` };
    }
    return { ...base, healthy: true };
  }

  onModuleInit(): void {
    const extra = (this.dataSource.options as { extra?: { max?: unknown } }).extra;
    const poolSize = (this.dataSource.options as { poolSize?: unknown }).poolSize;
    const size =
      typeof extra?.max === 'number'
        ? extra.max
        : typeof poolSize === 'number'
          ? poolSize
          : DEFAULT_PG_POOL_SIZE;
    if (size <= this.options.concurrency) {
      throw new InsufficientPoolSizeError(size, this.options.concurrency);
    }
  }

  /**
   * What the scheduler checks before it starts, on one read of the catalog.
   * An enabled channel whose provider key no adapter serves is a deployment
   * mistake (a missing module, a typo in the table): start-up fails instead of
   * those rows silently waiting. A registered adapter whose feature flag is off
   * is fine. An enabled channel whose timeout (with the settle margin) cannot
   * fit the lease would be left out of every cycle: a warning names it.
   */
  async checkCatalogAtStart(): Promise<void> {
    const enabled = (await readCatalogChannels(this.catalog)).channels.filter((c) => c.isEnabled);
    const missing = enabled
      .filter((channel) => this.adapters.lookup(channel.providerKey).kind === 'missing')
      .map((channel) => ({ channel: channel.key, providerKey: channel.providerKey }));
    if (missing.length > 0) throw new MissingProviderAdapterError(missing, this.adapters.keys());
    const allowanceMs = leaseAllowanceMs(this.options);
    for (const channel of enabled.filter((c) => c.timeoutMs > allowanceMs)) {
      this.logger.warn({
        msg: 'channel-timeout-exceeds-lease',
        event: 'channel-timeout-exceeds-lease',
        channel: channel.key,
        timeoutMs: channel.timeoutMs,
        allowanceMs,
        note: 'timeout_ms + settleMarginMs must fit lockTtlMs - maxCycleDurationMs - 5 s: the channel is left out of every cycle until its timeout is lowered or the lease raised',
      });
    }
  }

  /**
   * Stops claiming at once, lets provider calls in flight finish for
   * `shutdownGraceMs`, then cuts them (their rows are rescheduled without using
   * an attempt). Returns when every unit of work is committed or rolled back,
   * before the DataSource closes.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.shutdown.abort(new Error('application shutdown'));
    if (!this.running) return;
    const grace = setTimeout(
      () => this.hardStop.abort(new Error('shutdown grace period over')),
      this.options.shutdownGraceMs,
    );
    try {
      await this.running.catch(() => undefined);
    } finally {
      clearTimeout(grace);
    }
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
    const runId = randomUUID();
    const correlationId = options.correlationId ?? randomUUID();
    if (this.running) {
      this.logger.log({
        msg: 'retry-cycle-skipped',
        event: 'retry-cycle-skipped',
        reason: 'already-running',
        runId,
        correlationId,
      });
      return Promise.resolve(
        this.skipped(runId, correlationId, 'already-running', performance.now()),
      );
    }
    const run = this.execute(runId, correlationId, options).finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  private async execute(
    runId: string,
    correlationId: string,
    options: RunCycleOptions,
  ): Promise<CycleReport> {
    const started = performance.now();
    const stop = options.signal
      ? AbortSignal.any([this.shutdown.signal, options.signal])
      : this.shutdown.signal;
    if (stop.aborted) return this.skipped(runId, correlationId, 'cancelled', started);

    // Once per process (a no-op after): logged before any line of a cycle, and before it holds a lease.
    await this.preparedStatements.named();
    if (this.unreleased) {
      // Owner and fencing token checked by release(): a no-op if anyone took over meanwhile.
      await this.lock.release(this.unreleased);
      this.unreleased = null;
    }
    const lease = await this.lock.acquire(
      this.options.lockKey,
      this.options.instanceId,
      this.options.lockTtlMs,
    );
    if (!lease) {
      this.logger.log({
        msg: 'lease-not-acquired',
        event: 'lease-not-acquired',
        lockKey: this.options.lockKey,
        runId,
        correlationId,
      });
      this.lastCycle = { at: new Date(), status: 'lease-held' };
      this.metrics.cycleSkippedForLease(this.lastCycle.at);
      // The lease holder reports the channels; this instance's view from an older cycle would stay
      // stale (and keep an alert up after the fix) for as long as it does not hold the lease.
      this.misconfiguredChannels = [];
      this.metrics.channelsExcluded(new Map());
      return this.skipped(runId, correlationId, 'lease-held', started);
    }

    try {
      const now = options.now ?? this.clock.now();
      const interrupt = new AbortController();
      // Every provider call in flight listens on it: more than Node's default of 10 is expected.
      setMaxListeners(this.options.concurrency + 10, interrupt.signal);
      const onHardStop = (): void => interrupt.abort(this.hardStop.signal.reason);
      if (this.hardStop.signal.aborted) onHardStop();
      this.hardStop.signal.addEventListener('abort', onHardStop, { once: true });
      const span = tracer.startSpan('notifications.retry.cycle', {
        attributes: {
          'notifications.run_id': runId,
          'notifications.correlation_id': correlationId,
          'notifications.fencing_token': lease.fencingToken,
        },
      });
      const context: CycleContext = {
        runId,
        correlationId,
        now,
        lease,
        interrupt,
        span,
        timings: { claim: new TimingTally(), settle: new TimingTally() },
      };
      this.logger.log({
        msg: 'retry-cycle-started',
        event: 'retry-cycle-started',
        runId,
        correlationId,
        fencingToken: lease.fencingToken,
        now: now.toISOString(),
      });
      try {
        const report = await this.claimAndProcess(context, stop, started);
        if (report.status === 'completed') {
          span.setAttributes({
            'notifications.stop_reason': report.stopReason,
            'notifications.processed': report.counts.processed,
          });
        }
        return report;
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
        this.hardStop.signal.removeEventListener('abort', onHardStop);
      }
    } finally {
      await this.lock.release(lease).catch((error: unknown) => {
        this.unreleased = lease;
        this.logger.error({
          msg: 'lease-release-failed',
          event: 'lease-release-failed',
          runId,
          correlationId,
          error: errorText(error),
        });
      });
    }
  }

  private async claimAndProcess(
    context: CycleContext,
    stop: AbortSignal,
    started: number,
  ): Promise<CycleReport> {
    const { runId, correlationId, now } = context;
    const deadline = started + this.options.maxCycleDurationMs;

    const { eligible, excluded } = await this.resolveChannels();
    // Everything the cycle reads before it sends anything, in one round trip.
    const snapshot = await this.timedClaim(context, () =>
      this.notifications.cycleSnapshot(
        this.quotas(eligible),
        now,
        this.options.batchSize,
        this.callsInFlight.notificationIds(),
      ),
    );
    const exclusions = channelExclusions(excluded, snapshot.excludedDue);
    // The channels that deliver first: with more channels than label values, they keep their own
    // series and the excluded ones are the ones summed under _other.
    for (const { config } of eligible.values()) {
      this.metrics.channelActive(
        config.key,
        config.providerKey,
        this.circuits.state(config.providerKey),
      );
    }
    this.reportExclusions(context, exclusions);
    const counts = {
      processed: 0,
      sent: 0,
      retried: 0,
      terminal: 0,
      deferred: 0,
      skipped: 0,
      errors: 0,
    };
    let maxLagMs = 0;
    let stopReason: CycleStopReason | null = null;
    // Rows this cycle already handled: a later batch (drain mode) must not take them again, even
    // when a zero backoff made them due at once.
    const seen = new Set<string>(snapshot.candidates.map((candidate) => candidate.id));
    // Seen rows that may still be due (queued, in flight, skipped, failed, dropped): a further
    // claim leaves them out in SQL, or they would fill its LIMIT and hide rows of other channels.
    const open = new Set<string>(seen);
    let batchFull = snapshot.candidates.length >= this.options.batchSize;
    const queue = new DispatchQueue(
      snapshot.candidates,
      new Map([...eligible].map(([key, channel]) => [key, channel.config])),
      this.pacer,
      (providerKey) => this.circuits.state(providerKey),
    );
    const inFlight = new Set<Promise<void>>();

    try {
      for (;;) {
        if (stopReason) break;
        if (stop.aborted) stopReason = 'cancelled';
        else if (performance.now() >= deadline) stopReason = 'deadline';
        if (stopReason) break;
        if (inFlight.size >= this.options.concurrency) {
          await Promise.race(inFlight);
          continue;
        }
        const decision = queue.next(performance.now());
        if (decision.kind === 'drained') {
          if (!this.options.drain || !batchFull) break;
          // Drain mode: claim the next batch while the last rows of this one are still in flight, so
          // the worker never runs below its concurrency between batches. Providers whose circuit
          // opened since the cycle began are left out, like at its start.
          const quotas = this.quotas(
            eligible,
            (providerKey) => this.circuits.state(providerKey) !== 'open',
          );
          if (quotas.length === 0) break;
          const more = (
            await this.timedClaim(context, () =>
              this.notifications.findDueCandidates(quotas, now, this.options.batchSize, [
                ...open,
                ...this.callsInFlight.notificationIds(),
              ]),
            )
          ).filter((candidate) => !seen.has(candidate.id));
          for (const candidate of more) {
            seen.add(candidate.id);
            open.add(candidate.id);
          }
          batchFull = more.length >= this.options.batchSize;
          if (more.length === 0) break;
          queue.refill(more);
          continue;
        }
        if (decision.kind === 'wait') {
          // Only a completion can unblock the remaining channels, and nothing is in flight: they
          // cannot be served in this cycle.
          if (!Number.isFinite(decision.waitMs) && inFlight.size === 0) break;
          await Promise.race([
            ...inFlight,
            pause(Math.min(decision.waitMs, deadline - performance.now()), stop),
          ]);
          continue;
        }
        const { candidate } = decision;
        const task = this.rows
          .process(context, candidate, eligible.get(candidate.channel) as EligibleChannel)
          .then((outcome) => {
            if (outcome === 'skipped') counts.skipped++;
            else if (outcome === 'error') counts.errors++;
            else if (outcome === 'lease-lost') {
              // Another instance owns the cycle now: write nothing more, stop the calls in flight.
              counts.skipped++;
              stopReason = 'lease-lost';
              context.interrupt.abort(
                new LeaseLostError(context.lease.key, context.lease.fencingToken),
              );
            } else {
              // Committed: no longer due at `now` (a zero backoff is caught by `seen`).
              open.delete(candidate.id);
              counts.processed++;
              counts[outcome]++;
              maxLagMs = Math.max(maxLagMs, now.getTime() - candidate.dueAt.getTime());
            }
          })
          .finally(() => {
            queue.done(candidate);
            inFlight.delete(task);
          });
        inFlight.add(task);
      }
    } finally {
      // Cooperative stop: every row already handed out finishes its unit of work, also when a
      // further claim failed, so the lease is not released (nor a new cycle let in) under them.
      await Promise.allSettled(inFlight);
    }
    counts.skipped += queue.dropped;
    stopReason ??= batchFull ? 'batch-full' : 'no-more-due';

    // The snapshot's count still holds when the cycle committed nothing (so an empty cycle is 4
    // round trips: lease, channels, snapshot, release).
    const backlog =
      counts.processed > 0
        ? await this.notifications.countFailedBacklog().catch((error: unknown) => {
            // The rows are committed; a gauge must not turn the cycle into a failure.
            this.logger.warn({
              msg: 'backlog-count-failed',
              event: 'backlog-count-failed',
              runId,
              correlationId,
              error: errorText(error),
            });
            return snapshot.failedBacklog;
          })
        : snapshot.failedBacklog;
    this.metrics.backlog(backlog);
    this.failedBacklog = backlog.reduce((sum, b) => sum + b.rows, 0);
    this.misconfiguredChannels = exclusions.misconfigured;

    const finishedAt = this.clock.now();
    const durationMs = Math.round(performance.now() - started);
    this.lastCycle = { at: new Date(), status: 'completed' };
    this.metrics.cycleCompleted(this.lastCycle.at, durationMs);
    const report: CycleReport = {
      status: 'completed',
      runId,
      correlationId,
      startedAt: new Date(finishedAt.getTime() - durationMs),
      finishedAt,
      durationMs,
      stopReason,
      fencingToken: context.lease.fencingToken,
      counts,
      excludedChannels: exclusions.waiting,
      misconfiguredChannels: exclusions.misconfigured,
      timings: { claim: context.timings.claim.timings(), settle: context.timings.settle.timings() },
      maxLagMs,
    };
    this.logger.log({
      msg: 'cycle-completed',
      event: 'cycle-completed',
      runId,
      correlationId,
      stopReason,
      durationMs,
      maxLagMs,
      ...counts,
    });
    return report;
  }

  /** Runs one claim statement, timed for the report and the claim-duration histogram. */
  private async timedClaim<T>(context: CycleContext, claim: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await claim();
    } finally {
      const ms = performance.now() - started;
      context.timings.claim.add(ms);
      this.metrics.claimed(ms);
    }
  }

  /**
   * One log line per cycle about the channels left out, however many there
   * are (a warning when one of them is a configuration mistake), and the
   * metrics: rows waiting per channel, channels left out per reason.
   */
  private reportExclusions(context: CycleContext, exclusions: ChannelExclusions): void {
    this.metrics.waitingRows(
      exclusions.waiting.map(({ channel, dueRows }) => ({ channel, rows: dueRows })),
    );
    this.metrics.channelsExcluded(exclusions.channelsByReason);
    if (!exclusions.summary) return;
    const line = {
      msg: 'channels-excluded',
      event: 'channels-excluded',
      runId: context.runId,
      correlationId: context.correlationId,
      ...exclusions.summary,
    };
    if (exclusions.misconfigured.length > 0) this.logger.warn(line);
    else this.logger.log(line);
  }

  /** Which channels take part in this cycle; the others' rows are never read by the claim. */
  private async resolveChannels(): Promise<{
    eligible: Map<string, EligibleChannel>;
    excluded: Map<string, ChannelExclusionReason>;
  }> {
    const eligible = new Map<string, EligibleChannel>();
    const excluded = new Map<string, ChannelExclusionReason>();
    const maxTimeoutMs = leaseAllowanceMs(this.options);
    const catalog = await readCatalogChannels(this.catalog);
    // OPERATIONS HOOK (issue 13): an operator's pause leaves the channel out like a disabled one.
    const paused = await this.pauses.pausedKeys();
    this.pausedChannels = [...paused].sort();
    for (const config of catalog.channels) {
      if (eligible.has(config.key) || excluded.has(config.key)) continue;
      const found = this.adapters.lookup(config.providerKey);
      if (!config.isEnabled) excluded.set(config.key, 'disabled');
      else if (found.kind === 'missing') excluded.set(config.key, 'no-provider-adapter');
      else if (found.kind === 'disabled') excluded.set(config.key, 'provider-disabled');
      else if (paused.has(config.key)) excluded.set(config.key, 'paused');
      else if (this.circuits.state(config.providerKey) === 'open')
        excluded.set(config.key, 'circuit-open');
      else if (config.timeoutMs > maxTimeoutMs) excluded.set(config.key, 'timeout-exceeds-lease');
      else eligible.set(config.key, { config, adapter: found.adapter });
    }
    // An entry the catalog left out as invalid is a channel without a valid configuration.
    for (const key of catalog.invalid) {
      if (!eligible.has(key) && !excluded.has(key)) excluded.set(key, 'not-configured');
    }
    return { eligible, excluded };
  }

  /**
   * A rate-limited channel gets no more candidates than it can send before the
   * deadline, so its backlog cannot fill the batch and starve the others.
   */
  private quotas(
    eligible: Map<string, EligibleChannel>,
    include: (providerKey: string) => boolean = () => true,
  ): ChannelQuota[] {
    return [...eligible.values()]
      .filter(({ config }) => include(config.providerKey))
      .map(({ config }) => ({
        channel: config.key,
        quota:
          config.rateLimitPerSec === null
            ? this.options.batchSize
            : Math.max(
                1,
                Math.ceil((config.rateLimitPerSec * this.options.maxCycleDurationMs) / 1000),
              ),
      }));
  }

  private skipped(
    runId: string,
    correlationId: string,
    skipReason: CycleSkipReason,
    started: number,
  ): CycleReport {
    const finishedAt = this.clock.now();
    const durationMs = Math.round(performance.now() - started);
    return {
      status: 'skipped',
      skipReason,
      runId,
      correlationId,
      startedAt: new Date(finishedAt.getTime() - durationMs),
      finishedAt,
      durationMs,
    };
  }
}

/** Resolves after `ms`, or at once when the cycle is told to stop. */
function pause(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (stop.aborted || ms <= 0) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop.addEventListener('abort', done, { once: true });
  });
}
