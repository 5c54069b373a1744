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
import { RandomSource } from '../clock/random-source';
import { InsufficientPoolSizeError } from '../errors/insufficient-pool-size.error';
import { MissingProviderAdapterError } from '../errors/missing-provider-adapter.error';
import { DistributedLock } from '../locking/distributed-lock';
import { LastCompletedCycleRead } from '../locking/last-completed-cycle-read';
import type { Lease } from '../locking/lease';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RetryMetrics } from '../observability/retry-metrics';
import { judgeRetryWorkerHealth, type RetryWorkerHealth } from '../health/retry-worker-health';
import { OutboxWakeUp } from '../outbox/outbox-wake-up';
import { OutboxWriter } from '../outbox/outbox.writer';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { PreparedStatementMode } from '../persistence/prepared-statement-mode';
import { isPassingDatabaseError } from '../persistence/database-error-kind';
import { passingErrorDelayMs } from '../persistence/retry-passing-errors';
import { ProviderAdapterRegistry } from '../providers/provider-adapter.registry';
import { ChannelPacer, spacingMs } from './channel-pacer';
import { leaseAllowanceMs } from '../options/lease-allowance';
import { channelExclusions } from './channel-exclusions';
import { ChannelResolver, type ResolvedChannels } from './channel-resolver';
import { ClaimRelease } from './claim-release';
import type { ClaimedRow } from './claimed-row';
import type {
  CycleReport,
  CycleSkipReason,
  CycleStopReason,
  ExcludedChannel,
  MisconfiguredChannel,
} from '../vocabulary/cycle-report';
import { CycleReporter } from './cycle-reporter';
import { CycleState, type EligibleChannel } from './cycle-state';
import { DispatchQueue } from './dispatch-queue';
import { DueRowClaimer, type ChannelClaim } from './due-row-claimer';
import { OutcomeWriterFactory, type GroupCommitSettings } from './outcome-writer';
import { CLAIM_WRITE_ALLOWANCE_MS, ProviderCaller } from './provider-caller';
import { ProviderCallsInFlight } from './provider-calls-in-flight';
import { RowCounts, type ChannelRowCount } from './row-counts';
import type { RowTransition } from './row-transition';
import { settleRow } from './settle-row';
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

const DEFAULT_PG_POOL_SIZE = 10;
/** A claim and an outcome write at once; more only makes writes wait less. */
export const MIN_POOL_SIZE = 2;
/** A claim goes out once a tenth of the call slots are free: fewer, larger claims. */
const CLAIM_AT_FREE_SHARE = 0.1;
/**
 * A rate-limited channel claims the rows whose rate slots come within this
 * long, each claim stretched by its wait: a claimed row never waits long
 * enough in the queue for its claim to run short.
 */
const RATE_HORIZON_MS = 1_000;
/**
 * A paced channel claims again once what it has queued covers less than this
 * much of the horizon: a fast channel's claims take many rows each, not one
 * row per rate slot.
 */
const RATE_REFILL_MS = RATE_HORIZON_MS / 2;
/** No rate slot is claimed this close to the cycle's deadline. */
const RATE_DEADLINE_MARGIN_MS = 50;
const GROUP_COMMIT: Omit<GroupCommitSettings, 'maxStatements'> = { maxRows: 100, lingerMs: 2 };
/**
 * How long claims that fail for a passing reason (a migration's lock behind a
 * DBA's lock_timeout, a killed backend) are tried again before the cycle gives
 * up: past it the database is down rather than busy, and the next tick asks.
 */
const CLAIM_RETRY_WINDOW_MS = 10_000;
/**
 * A running row whose claim lapses within this long (as this process sees it,
 * a little before the database does) is left out of the cycle's claims.
 */
const LAPSING_CLAIM_MARGIN_MS = 1_000;
const tracer = trace.getTracer('@pin/notifications-retry');

/**
 * The retry cycle (DESIGN §3), top to bottom: acquire the lease → resolve the
 * channels → claim what can start, call, settle, until the batch is done, the
 * backlog drained, the deadline reached or the cycle told to stop → count →
 * release the lease. No connection is held during a provider call; the units
 * are DueRowClaimer (claim), ProviderCaller (call) and OutcomeWriter
 * (settle), and CycleReporter says what happened. Single-flight per instance.
 */
@Injectable()
export class RetryCycleService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('NotificationsRetryCycle');
  /** Stops claiming new rows. */
  private readonly shutdown = new AbortController();
  /** Cuts provider calls still in flight once the shutdown grace period is over. */
  private readonly hardStop = new AbortController();
  private running: Promise<CycleReport> | null = null;
  // Monotonic, not the injectable Clock: the start-up allowance of health is about the process.
  private readonly startedAt = performance.now();
  private lastCycle: { at: Date; status: 'completed' | 'lease-held' } | null = null;
  private failedBacklog: number | null = null;
  private misconfiguredChannels: readonly MisconfiguredChannel[] = [];
  private excludedChannels: readonly ExcludedChannel[] = [];
  private pausedChannels: readonly string[] = [];
  /** Statements of outcome writes in flight at once: the pool keeps one for the claim. */
  private writeStatements = MIN_POOL_SIZE - 1;
  /**
   * A lease this instance could not release (the database was gone when its
   * cycle ended). Released before the next acquire, so the worker resumes on
   * its next tick instead of waiting out the TTL behind its own stale lease.
   */
  private unreleased: Lease | null = null;
  /** The cycle holding the lease now, for what the shutdown drains of it. */
  private current: CycleState | null = null;
  /** What became of the lease of the last cycle run (reset as each one starts). */
  private leaseAtEnd: LeaseAtStop = 'not-held';
  private stopReport: RetryWorkerStopReport | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    private readonly lock: DistributedLock,
    private readonly catalog: ChannelCatalog,
    private readonly adapters: ProviderAdapterRegistry,
    private readonly channels: ChannelResolver,
    private readonly claimer: DueRowClaimer,
    private readonly caller: ProviderCaller,
    private readonly writers: OutcomeWriterFactory,
    private readonly claims: ClaimRelease,
    private readonly counts: RowCounts,
    private readonly reporter: CycleReporter,
    private readonly outbox: OutboxWriter,
    private readonly outboxWakeUp: OutboxWakeUp,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly metrics: RetryMetrics,
    private readonly pacer: ChannelPacer,
    private readonly callsInFlight: ProviderCallsInFlight,
    private readonly preparedStatements: PreparedStatementMode,
    private readonly completedCycles: LastCompletedCycleRead,
  ) {
    circuits.onStateChange((providerKey, state) => metrics.circuit(providerKey, state));
  }

  /**
   * The worker's verdict for /health (judgeRetryWorkerHealth): whether some
   * instance completed a cycle within `healthStaleMultiple` schedule
   * intervals, as the lease row records it, with this instance's own view as
   * details. Answers within about a second whatever the database does.
   */
  async health(): Promise<RetryWorkerHealth> {
    const completed = await this.completedCycles.read();
    return judgeRetryWorkerHealth({
      enabled: this.options.enabled,
      staleAfterMs: this.options.scheduleIntervalMs * this.options.healthStaleMultiple,
      uptimeMs: performance.now() - this.startedAt,
      completed,
      lastCycle: this.lastCycle,
      now: new Date(),
      failedBacklog: this.failedBacklog,
      misconfiguredChannels: this.misconfiguredChannels,
      pausedChannels: this.pausedChannels,
    });
  }

  /** The pool needs room for a claim and a write at once; calls hold no connection. */
  onModuleInit(): void {
    const extra = (this.dataSource.options as { extra?: { max?: unknown } }).extra;
    const poolSize = (this.dataSource.options as { poolSize?: unknown }).poolSize;
    const size =
      typeof extra?.max === 'number'
        ? extra.max
        : typeof poolSize === 'number'
          ? poolSize
          : DEFAULT_PG_POOL_SIZE;
    if (size < MIN_POOL_SIZE) throw new InsufficientPoolSizeError(size, MIN_POOL_SIZE);
    this.writeStatements = Math.min(2, size - 1);
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
    const runId = randomUUID();
    const correlationId = options.correlationId ?? randomUUID();
    if (this.running) {
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
    // Until this run holds a lease: an acquire that fails or finds it held leaves none to report.
    this.leaseAtEnd = 'not-held';

    // Once per process (a no-op after): logged before any line of a cycle, and before it holds a lease.
    await this.preparedStatements.named();
    if (this.unreleased) {
      // Owner and fencing token checked by release(): a no-op if anyone took over meanwhile. Not
      // recorded as completed even if it was: the record would carry this tick's time.
      await this.lock.release(this.unreleased);
      this.unreleased = null;
    }
    const lease = await this.lock.acquire(
      this.options.lockKey,
      this.options.instanceId,
      this.options.lockTtlMs,
    );
    if (!lease) return this.leaseHeld(runId, correlationId, started);
    // A host's clock given as a plain value may lack the hook: it keeps its own time then.
    if (lease.acquiredAt)
      (this.clock as Partial<Clock>).observeDatabaseTime?.call(this.clock, lease.acquiredAt);
    const cycle = this.begin(runId, correlationId, lease, options.now ?? this.clock.now(), started);
    this.current = cycle;

    let report: CycleReport | undefined;
    const onHardStop = (): void => cycle.interrupt.abort(this.hardStop.signal.reason);
    if (this.hardStop.signal.aborted) onHardStop();
    this.hardStop.signal.addEventListener('abort', onHardStop, { once: true });
    try {
      const channels = await this.channels.resolve();
      this.pausedChannels = channels.paused;
      await this.work(cycle, channels, stop);
      if (cycle.leaseLoss) this.reporter.leaseLost(cycle, cycle.leaseLoss);
      else await this.countRows(cycle, channels);
      report = this.complete(cycle, started);
      return report;
    } catch (error) {
      cycle.span.recordException(error instanceof Error ? error : String(error));
      cycle.span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      cycle.span.end();
      this.hardStop.signal.removeEventListener('abort', onHardStop);
      // After the last write. A lease found lost is someone else's now (release would be a no-op).
      this.leaseAtEnd = cycle.leaseLoss
        ? 'not-held'
        : (await this.releaseLease(cycle, report !== undefined))
          ? 'released'
          : 'release-failed';
      this.current = null;
    }
  }

  private begin(
    runId: string,
    correlationId: string,
    lease: Lease,
    now: Date,
    started: number,
  ): CycleState {
    const span = tracer.startSpan('notifications.retry.cycle', {
      attributes: {
        'notifications.run_id': runId,
        'notifications.correlation_id': correlationId,
        'notifications.fencing_token': lease.fencingToken,
      },
    });
    // Measured from before the acquire was sent: the local view of the lease ends before the database's.
    const leaseEnds = started + this.options.lockTtlMs;
    const writer = this.writers.forLease(
      lease,
      { ...GROUP_COMMIT, maxStatements: this.writeStatements },
      leaseEnds,
    );
    const cycle = new CycleState(
      runId,
      correlationId,
      now,
      lease,
      span,
      writer,
      started,
      started + this.options.maxCycleDurationMs,
      leaseEnds,
    );
    // Every provider call in flight listens on it: more than Node's default of 10 is expected.
    setMaxListeners(this.options.concurrency + 10, cycle.interrupt.signal);
    this.reporter.cycleStarted(cycle);
    return cycle;
  }

  /**
   * Claim → call → settle until there is nothing more to do. A claim goes out
   * when a tenth of the call slots are free (or none is busy), for no more rows
   * than can start now; each row then runs on its own (`runRow`) and frees its
   * slot when its outcome is written. Rows claimed but not started when the
   * cycle stops are handed back.
   */
  private async work(
    cycle: CycleState,
    channels: ResolvedChannels,
    stop: AbortSignal,
  ): Promise<void> {
    const queue = new DispatchQueue<ClaimedRow>(
      new Map([...channels.eligible].map(([key, channel]) => [key, channel.config])),
      this.pacer,
      (providerKey) => this.circuits.state(providerKey),
    );
    const wakeup = new Wakeup(stop);
    const claimRetry: ClaimRetry = { failures: 0, since: null, at: 0 };
    const running = new Set<Promise<void>>();
    const drained = new Set<string>();
    try {
      for (;;) {
        if (stop.aborted) cycle.stop('cancelled');
        else if (performance.now() >= cycle.deadline) cycle.stop('deadline');
        if (cycle.stopReason) break;

        const waitMs = this.startRows(cycle, channels, queue, running, wakeup);
        await this.handBack(cycle, queue.takeDropped(), 'circuit-open');
        const free = this.options.concurrency - running.size - queue.size;
        const plan: ClaimPlan =
          performance.now() >= claimRetry.at
            ? this.nextClaim(cycle, channels, queue, drained, running.size, free)
            : { claim: null, nextAt: claimRetry.at };
        const claim = plan.claim;
        if (claim) {
          const started = performance.now();
          const result = await this.claimer
            .claim({
              lease: cycle.lease,
              channels: claim.channels,
              now: cycle.now,
              limit: claim.limit,
              excluded: this.excludedFromClaim(cycle),
              connectBy: cycle.connectBy,
            })
            .catch((error: unknown) => this.claimFailed(cycle, claimRetry, error));
          if (result === null) continue;
          claimRetry.failures = 0;
          claimRetry.since = null;
          if (result.kind === 'lease-lost') {
            cycle.loseLease(result.cause);
            break;
          }
          this.reporter.claimed(cycle, performance.now() - started, result.rows);
          cycle.claimed += result.rows.length;
          for (const channel of result.drained) drained.add(channel);
          queue.add(result.rows);
          continue;
        }
        // A paced channel's next slot, or a claim to try again, still to come before the deadline.
        const claimInMs = plan.nextAt < cycle.deadline ? plan.nextAt - performance.now() : Infinity;
        if (running.size === 0 && queue.size === 0 && claimInMs === Infinity) {
          cycle.stop(this.idleReason(cycle, channels, drained));
          break;
        }
        await wakeup.wait(
          Math.min(waitMs, Math.max(0, claimInMs), cycle.deadline - performance.now()),
        );
      }
    } finally {
      await this.handBack(cycle, queue.takeAll(), cycle.stopReason ?? 'error');
      await Promise.allSettled(running);
    }
  }

  /**
   * A claim that failed for a passing reason changed nothing (one atomic
   * statement): the cycle claims again after a backoff, for a while. Rows in
   * flight go on meanwhile. Any other failure, or one that outlasts the
   * window, ends the cycle with that error.
   */
  private claimFailed(cycle: CycleState, retry: ClaimRetry, error: unknown): null {
    const now = performance.now();
    retry.since ??= now;
    if (!isPassingDatabaseError(error) || now - retry.since > CLAIM_RETRY_WINDOW_MS) throw error;
    retry.failures++;
    const delayMs = passingErrorDelayMs(retry.failures, this.random.next());
    retry.at = now + delayMs;
    this.reporter.claimFailed(cycle, error, delayMs);
    return null;
  }

  /**
   * Rows a claim must leave alone although they may look due: a call of this
   * instance still runs for them with its row already settled (written off
   * after its margin), or this cycle handed them back or wrote them due again.
   * Rows running in this cycle are claimed, so not due, unless their claim is
   * about to lapse while their outcome write is still tried again (a lock, a
   * killed backend): those are left out too, or this cycle would call again a
   * notification it may have delivered.
   */
  private excludedFromClaim(cycle: CycleState): string[] {
    const excluded = [...cycle.dueAgain];
    for (const id of this.callsInFlight.notificationIds()) {
      if (!cycle.running.has(id)) excluded.push(id);
    }
    const lapsingBy = performance.now() + LAPSING_CLAIM_MARGIN_MS;
    for (const [id, claimedUntil] of cycle.running) {
      if (claimedUntil <= lapsingBy) excluded.push(id);
    }
    return excluded;
  }

  /**
   * Starts as many queued rows as slots and channel limits allow. Returns how
   * long until a queued row may start by its channel's pace (Infinity: only a
   * finished row can change anything).
   */
  private startRows(
    cycle: CycleState,
    channels: ResolvedChannels,
    queue: DispatchQueue<ClaimedRow>,
    running: Set<Promise<void>>,
    wakeup: Wakeup,
  ): number {
    while (running.size < this.options.concurrency) {
      const decision = queue.next(performance.now());
      if (decision.kind === 'wait') return decision.waitMs;
      if (decision.kind === 'empty') break;
      const row = decision.row;
      const channel = channels.eligible.get(row.channel) as EligibleChannel;
      cycle.running.set(row.id, row.claimedUntil);
      const task: Promise<void> = this.runRow(cycle, row, channel).finally(() => {
        cycle.running.delete(row.id);
        queue.done(row);
        running.delete(task);
        wakeup.notify();
      });
      running.add(task);
    }
    return Number.POSITIVE_INFINITY;
  }

  /**
   * The next claim, or none when none is worth sending now; `nextAt` is when
   * a rate-paced channel may claim again (Infinity: only a finished row can
   * change anything).
   */
  private nextClaim(
    cycle: CycleState,
    channels: ResolvedChannels,
    queue: DispatchQueue<ClaimedRow>,
    drained: ReadonlySet<string>,
    busy: number,
    free: number,
  ): ClaimPlan {
    const none: ClaimPlan = { claim: null, nextAt: Number.POSITIVE_INFINITY };
    const remaining = this.options.drain
      ? Number.POSITIVE_INFINITY
      : this.options.batchSize - cycle.claimed;
    const limit = Math.min(free, remaining);
    if (limit < 1) return none;
    // Busy: wait until enough slots are free for a claim worth its round trip.
    const threshold = Math.ceil(this.options.concurrency * CLAIM_AT_FREE_SHARE);
    if (busy + queue.size > 0 && limit < Math.min(threshold, remaining)) return none;
    const now = performance.now();
    const claims: ChannelClaim[] = [];
    let nextAt = Number.POSITIVE_INFINITY;
    for (const { config } of channels.eligible.values()) {
      if (drained.has(config.key)) continue;
      const share = this.share(config, queue, now, cycle.deadline);
      nextAt = Math.min(nextAt, share.nextAt);
      // The claim's fence checks the lease outlives it (DESIGN §3.3); it covers the wait for the rate slot.
      const claimMs = this.claimMs(config) + share.waitMs;
      if (share.quota > 0)
        claims.push({ channel: config.key, quota: Math.min(share.quota, limit), claimMs });
    }
    return { claim: claims.length > 0 ? { channels: claims, limit } : null, nextAt };
  }

  /**
   * How many more rows of the channel can start now and, for a rate-limited
   * one, how long the last of them waits for its slot; or, when its next slot
   * is further off, when to ask again.
   */
  private share(
    config: EligibleChannel['config'],
    queue: DispatchQueue<ClaimedRow>,
    now: number,
    deadline: number,
  ): { quota: number; waitMs: number; nextAt: number } {
    const nothing = { quota: 0, waitMs: 0, nextAt: Number.POSITIVE_INFINITY };
    const circuit = this.circuits.state(config.providerKey);
    if (circuit === 'open') return nothing;
    // A half-open circuit lets one probe through: one row, once nothing else of it is held.
    if (circuit === 'half-open') {
      const held = queue.inFlightFor(config.providerKey) + queue.waiting(config.key);
      return { ...nothing, quota: held > 0 ? 0 : 1 };
    }
    let quota = Number.POSITIVE_INFINITY;
    if (config.maxConcurrency !== null) quota = config.maxConcurrency - queue.held(config.key);
    if (config.rateLimitPerSec === null) return { ...nothing, quota: Math.max(0, quota) };
    // Paced (DESIGN §3.4): only rows whose rate slots come within the horizon and before the
    // deadline, behind those already waiting; a claim made earlier would lapse in the queue.
    const rate = config.rateLimitPerSec;
    const first = this.pacer.slotAt(config.key, rate, now, queue.waiting(config.key));
    if (first >= deadline) return nothing;
    if (first - now > RATE_REFILL_MS) return { ...nothing, nextAt: first - RATE_REFILL_MS };
    // A slot right at the deadline would most likely be handed back unsent.
    const last = Math.min(now + RATE_HORIZON_MS, deadline - RATE_DEADLINE_MARGIN_MS);
    const slots = Math.min(quota, Math.floor((last - first) / spacingMs(rate)) + 1);
    if (slots < 1) return nothing;
    const waitMs = Math.ceil(first + (slots - 1) * spacingMs(rate) - now);
    return { quota: slots, waitMs, nextAt: Number.POSITIVE_INFINITY };
  }

  /**
   * One row's call and outcome. Never throws: an unexpected error is logged
   * and the row's claim lapses, which makes it due again.
   */
  private async runRow(
    cycle: CycleState,
    row: ClaimedRow,
    channel: EligibleChannel,
  ): Promise<void> {
    try {
      // A row that waited in the queue so long that its call's timeout would outlast the claim goes
      // back (a wait shorter than that only shortens how long a late answer is awaited).
      if (performance.now() + channel.config.timeoutMs > row.claimedUntil) {
        return await this.handBack(cycle, [row], 'claim-too-short');
      }
      const call = await this.caller.call(cycle, row, channel);
      const settlement = settleRow(
        row,
        channel,
        call,
        this.clock.now(),
        this.random.next(),
        this.outbox,
        cycle,
      );
      if (settlement.kind === 'release') return await this.handBack(cycle, [row], 'call-cut');
      const result = await cycle.writer.write(settlement);
      if (result.kind === 'lease-lost') {
        cycle.loseLease(result.cause);
        // The call is over: the claim goes back, so the lease's new owner need not wait for it.
        return await this.handBack(cycle, [row], 'lease-lost');
      }
      if (result.kind === 'written') {
        // The relay of this process publishes the event now rather than at its next poll.
        if (settlement.event) this.outboxWakeUp.eventsWritten();
        if (isDueAt(settlement.transition, cycle.now)) cycle.dueAgain.add(row.id);
      }
      await this.reporter.written(cycle, channel, settlement, result);
      // No provider was called: nothing happened that the claim's lapse should hold back.
      if (result.kind === 'not-written' && !settlement.hold)
        await this.handBack(cycle, [row], 'not-written');
    } catch (error) {
      this.reporter.rowError(cycle, row, error);
    }
  }

  /** Hands claimed rows back untouched; if that fails, their claims lapse instead. */
  private async handBack(
    cycle: CycleState,
    rows: readonly ClaimedRow[],
    reason: string,
  ): Promise<void> {
    if (rows.length === 0) return;
    // Not claimed again by this cycle: whatever sent it back would most likely do so again.
    for (const row of rows) cycle.dueAgain.add(row.id);
    try {
      this.reporter.released(cycle, await this.claims.release(rows), reason);
    } catch (error) {
      this.reporter.releaseFailed(cycle, rows.length, error);
    }
  }

  /**
   * The counts the cycle reports, after its work and off the claim path: a
   * count that fails leaves the gauges as they were (DESIGN §3.2).
   */
  private async countRows(cycle: CycleState, channels: ResolvedChannels): Promise<void> {
    const waiting = await this.counts
      .waiting([...channels.eligible.keys()], cycle.now, cycle.connectBy)
      .catch((error: unknown): ChannelRowCount[] | null => {
        this.reporter.countFailed(cycle, 'waiting-rows', error);
        return null;
      });
    const exclusions = channelExclusions(channels.excluded, waiting ?? []);
    // The channels that deliver first: with more channels than label values, they keep their own
    // series and the excluded ones are the ones summed under _other.
    for (const { config } of channels.eligible.values()) {
      this.metrics.channelActive(
        config.key,
        config.providerKey,
        this.circuits.state(config.providerKey),
      );
    }
    if (waiting) this.reporter.exclusions(cycle, exclusions);
    this.misconfiguredChannels = exclusions.misconfigured;
    this.excludedChannels = exclusions.waiting;

    const backlog = await this.counts.failedBacklog(cycle.connectBy).catch((error: unknown) => {
      this.reporter.countFailed(cycle, 'failed-backlog', error);
      return null;
    });
    if (backlog) {
      this.metrics.backlog(backlog);
      this.failedBacklog = backlog.reduce((sum, b) => sum + b.rows, 0);
    }
  }

  private complete(cycle: CycleState, started: number): CycleReport {
    const finishedAt = this.clock.now();
    const durationMs = Math.round(performance.now() - started);
    const stopReason = cycle.stopReason ?? 'no-more-due';
    cycle.span.setAttributes({
      'notifications.stop_reason': stopReason,
      'notifications.processed': cycle.counts.processed,
    });
    const report: CycleReport = {
      status: 'completed',
      runId: cycle.runId,
      correlationId: cycle.correlationId,
      startedAt: new Date(finishedAt.getTime() - durationMs),
      finishedAt,
      durationMs,
      stopReason,
      fencingToken: cycle.lease.fencingToken,
      counts: { ...cycle.counts },
      excludedChannels: cycle.leaseLoss ? [] : this.excludedChannels,
      misconfiguredChannels: cycle.leaseLoss ? [] : this.misconfiguredChannels,
      timings: { claim: cycle.timings.claim.timings(), settle: cycle.timings.settle.timings() },
      maxLagMs: cycle.maxLagMs,
    };
    this.lastCycle = { at: new Date(), status: 'completed' };
    this.reporter.cycleCompleted(report, this.lastCycle.at);
    return report;
  }

  /**
   * A completed cycle is recorded with the release (the lease row says when),
   * which is what /health reads on every instance. False when the release
   * failed: the lease is kept, to be released before the next acquire.
   */
  private async releaseLease(cycle: CycleState, cycleCompleted: boolean): Promise<boolean> {
    return this.lock.release(cycle.lease, { cycleCompleted }).then(
      () => true,
      (error: unknown) => {
        this.unreleased = cycle.lease;
        this.reporter.leaseReleaseFailed(cycle, error);
        return false;
      },
    );
  }

  private leaseHeld(runId: string, correlationId: string, started: number): CycleReport {
    this.lastCycle = { at: new Date(), status: 'lease-held' };
    // Counted, not stamped: the last-cycle metric moves only on completed cycles, so a lease nobody
    // can take leaves it to age on every instance and the stalled alert fires.
    this.metrics.cycleSkippedForLease();
    // The lease holder reports the channels; this instance's view from an older cycle would stay
    // stale (and keep an alert up after the fix) for as long as it does not hold the lease.
    this.misconfiguredChannels = [];
    this.metrics.channelsExcluded(new Map());
    return this.skipped(runId, correlationId, 'lease-held', started);
  }

  /** Why a cycle with nothing running and nothing to claim ends. */
  private idleReason(
    cycle: CycleState,
    channels: ResolvedChannels,
    drained: ReadonlySet<string>,
  ): CycleStopReason {
    if ([...channels.eligible.keys()].every((key) => drained.has(key))) return 'no-more-due';
    if (!this.options.drain && cycle.claimed >= this.options.batchSize) return 'batch-full';
    // The rest wait behind an open circuit.
    return 'no-more-due';
  }

  private claimMs(config: EligibleChannel['config']): number {
    return config.timeoutMs + this.options.settleMarginMs + CLAIM_WRITE_ALLOWANCE_MS;
  }

  private skipped(
    runId: string,
    correlationId: string,
    skipReason: CycleSkipReason,
    started: number,
  ): CycleReport {
    this.reporter.skipped(runId, correlationId, skipReason, this.options.lockKey);
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

/** The claim to send now, if any, and when one may be worth sending next. */
interface ClaimPlan {
  readonly claim: { readonly channels: ChannelClaim[]; readonly limit: number } | null;
  readonly nextAt: number;
}

/** Claims failing for a passing reason in a row: how many, since when, and when to try again. */
interface ClaimRetry {
  failures: number;
  since: number | null;
  at: number;
}

/** Whether a row written with `transition` is due at `now` (what the generated due_at says). */
function isDueAt(transition: RowTransition, now: Date): boolean {
  const dueAt =
    transition.status === 'Failed'
      ? transition.nextAttemptAt
      : transition.status === 'Pending'
        ? transition.scheduledAt
        : null;
  return dueAt !== null && dueAt.getTime() <= now.getTime();
}
