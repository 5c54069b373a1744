import { Inject, Injectable } from '@nestjs/common';
import {
  Counter,
  Gauge,
  Histogram,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
  type Registry,
} from 'prom-client';
import type { CircuitState } from '../circuit/circuit-state';
import type { ChannelExclusionReason } from '../vocabulary/cycle-report';
import type { ItemResult } from '../vocabulary/item-result';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { BoundedLabelValues, OVERFLOW_LABEL_VALUE } from './bounded-label-values';
import { RetryMetricName as M } from './metric-names';

const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };
// Labels are bounded on purpose: channel and provider keys (capped per process), never a tenant or
// a notification id.
const ITEM = ['channel', 'provider'];
/** The cycle's statements that are sent again after a passing failure. */
export const RETRIED_STATEMENTS = [
  'claim',
  'settle',
  'hold',
  'release',
  'lease-release',
  'late-success',
] as const;
export type RetriedStatement = (typeof RETRIED_STATEMENTS)[number];
const STATEMENT_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 5_000];

/**
 * The library's metrics, declared in the configured registry (prom-client's
 * default unless the host passes its own), and what the cycle records: one
 * method per fact, so the cycle never handles prom-client types. A metric of
 * the same name already in the registry (a second app in one process) is
 * reused, not declared twice.
 */
@Injectable()
export class RetryMetrics {
  private readonly channels: BoundedLabelValues;
  private readonly providers: BoundedLabelValues;
  /** The last circuit state of each provider reported under `_other`. */
  private readonly overflowCircuits = new Map<string, number>();
  private readonly processed: Counter<string>;
  private readonly sent: Counter<string>;
  private readonly retried: Counter<string>;
  private readonly terminalFailed: Counter<string>;
  private readonly deferred: Counter<string>;
  private readonly itemErrors: Counter<string>;
  private readonly leaseSkipped: Counter<string>;
  private readonly lateAnswers: Counter<string>;
  private readonly lateSuccesses: Counter<string>;
  private readonly databaseClientErrors: Counter<string>;
  private readonly claimsLapsed: Counter<string>;
  private readonly claimsLost: Counter<string>;
  private readonly statementRetries: Counter<string>;
  private readonly failedBacklog: Gauge<string>;
  private readonly channelDisabledRows: Gauge<string>;
  private readonly channelsExcludedGauge: Gauge<string>;
  private readonly circuitState: Gauge<string>;
  private readonly callsInFlightGauge: Gauge<string>;
  private readonly lastCycleTimestamp: Gauge<string>;
  private readonly cycleDuration: Histogram<string>;
  private readonly claimDuration: Histogram<string>;
  private readonly settleDuration: Histogram<string>;
  private readonly lag: Histogram<string>;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS) options: ResolvedNotificationsRetryOptions,
  ) {
    const { registry, maxLabelValues } = options.metrics;
    this.channels = new BoundedLabelValues(maxLabelValues);
    this.providers = new BoundedLabelValues(maxLabelValues);
    const counter = (c: CounterConfiguration<string>): Counter<string> =>
      existing<Counter<string>>(registry, c.name) ?? new Counter({ ...c, registers: [registry] });
    const gauge = (c: GaugeConfiguration<string>): Gauge<string> =>
      existing<Gauge<string>>(registry, c.name) ?? new Gauge({ ...c, registers: [registry] });
    const histogram = (c: HistogramConfiguration<string>): Histogram<string> =>
      existing<Histogram<string>>(registry, c.name) ??
      new Histogram({ ...c, registers: [registry] });

    this.processed = counter({
      name: M.processed,
      help: 'Rows given an outcome by the retry worker',
      labelNames: ITEM,
    });
    this.sent = counter({ name: M.sent, help: 'Rows delivered (now Sent)', labelNames: ITEM });
    this.retried = counter({
      name: M.retried,
      help: 'Intermediate failures rescheduled by backoff',
      labelNames: ITEM,
    });
    this.terminalFailed = counter({
      name: M.terminalFailed,
      help: 'Rows failed for good (terminal Failed)',
      labelNames: ITEM,
    });
    this.deferred = counter({
      name: M.deferred,
      help: 'Rows rescheduled without using an attempt (throttled or interrupted)',
      labelNames: ITEM,
    });
    this.itemErrors = counter({
      name: M.itemErrors,
      help: 'Outcomes that could not be written as decided (held as outcome_not_recorded, or left to their claim lapse)',
      labelNames: ['channel'],
    });
    this.leaseSkipped = counter({
      name: M.leaseSkipped,
      help: 'Ticks skipped because another instance holds the lease',
    });
    this.lateAnswers = counter({
      name: M.lateAnswers,
      help: 'Provider answers after the channel timeout; recorded="true" inside the settle margin (the outcome), "false" after it (lost)',
      labelNames: [...ITEM, 'recorded'],
    });
    this.lateSuccesses = counter({
      name: M.lateSuccesses,
      help: 'Successes answered after their attempt was written off (past the settle margin, or cut by the worker); recorded="true" when the notification was written Sent then, "false" when it already was or the write failed',
      labelNames: [...ITEM, 'recorded'],
    });
    this.databaseClientErrors = counter({
      name: M.databaseClientErrors,
      help: "Errors emitted by the host DataSource's pg clients (a dropped connection), caught so they cannot crash the process",
    });
    this.claimsLapsed = counter({
      name: M.claimsLapsed,
      help: 'Rows claimed again after an earlier claim lapsed (its worker died or stalled past timeout and settle margin)',
      labelNames: ['channel'],
    });
    this.claimsLost = counter({
      name: M.claimsLost,
      help: 'Outcome writes whose claim token no longer matched: nothing was written for them',
      labelNames: ['channel'],
    });
    this.statementRetries = counter({
      name: M.statementRetries,
      help: 'Statements sent again after a passing failure (lock or statement timeout, serialization failure, lost connection), by statement',
      labelNames: ['statement'],
    });
    this.failedBacklog = gauge({
      name: M.failedBacklog,
      help: 'Failed rows still awaiting a retry, as of the last cycle',
      labelNames: ['channel'],
    });
    this.channelDisabledRows = gauge({
      name: M.channelDisabledRows,
      help: 'Due rows left waiting because their channel is left out of the claim (disabled, unconfigured, without provider, circuit open)',
      labelNames: ['channel'],
    });
    this.channelsExcludedGauge = gauge({
      name: M.channelsExcluded,
      help: 'Channels left out of the last cycle, by reason (a catalog channel, or a channel of due rows the catalog does not know)',
      labelNames: ['reason'],
    });
    this.callsInFlightGauge = gauge({
      name: M.callsInFlight,
      help: 'Provider calls this instance has started and that have not settled yet (some may outlive their cycle)',
    });
    this.circuitState = gauge({
      name: M.circuitState,
      help: 'Provider circuit: 0 closed, 1 half-open, 2 open',
      labelNames: ['provider'],
    });
    this.lastCycleTimestamp = gauge({
      name: M.lastCycleTimestamp,
      help: 'Unix time of the last cycle this instance completed (0 until its first); ticks skipped for a held lease leave it as it is',
    });
    this.cycleDuration = histogram({
      name: M.cycleDuration,
      help: 'Duration of completed retry cycles in milliseconds',
      buckets: [100, 500, 1_000, 5_000, 10_000, 30_000, 45_000, 60_000, 90_000],
    });
    this.claimDuration = histogram({
      name: M.claimDuration,
      help: 'Duration of one claim of due rows (the statement that finds what the cycle sends) in milliseconds',
      buckets: STATEMENT_BUCKETS,
    });
    this.settleDuration = histogram({
      name: M.settleDuration,
      help: 'Per row, from its outcome being known to its write committed (group commit included), in milliseconds',
      buckets: STATEMENT_BUCKETS,
    });
    this.lag = histogram({
      name: M.lag,
      help: 'Delay between a row becoming due and its processing, in milliseconds',
      labelNames: ['channel'],
      buckets: [1_000, 5_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000],
    });
    this.databaseClientErrors.inc(0);
    for (const statement of RETRIED_STATEMENTS) this.statementRetries.inc({ statement }, 0);
    this.callsInFlightGauge.set(0);
  }

  itemProcessed(result: ItemResult, channel: string, provider: string, lagMs: number): void {
    const labels = this.item(channel, provider);
    this.processed.inc(labels);
    if (result === 'sent') this.sent.inc(labels);
    else if (result === 'retried') this.retried.inc(labels);
    else if (result === 'terminal') this.terminalFailed.inc(labels);
    else this.deferred.inc(labels);
    this.lag.observe({ channel: labels.channel }, Math.max(0, lagMs));
  }

  /**
   * Starts every series of a channel at zero, so `increase()` counts its first
   * events after a restart and dashboards show zeros instead of gaps.
   */
  channelActive(channel: string, provider: string, circuit: CircuitState): void {
    const labels = this.item(channel, provider);
    for (const counter of [
      this.processed,
      this.sent,
      this.retried,
      this.terminalFailed,
      this.deferred,
    ]) {
      counter.inc(labels, 0);
    }
    this.itemErrors.inc({ channel: labels.channel }, 0);
    this.claimsLapsed.inc({ channel: labels.channel }, 0);
    this.claimsLost.inc({ channel: labels.channel }, 0);
    for (const recorded of ['true', 'false']) {
      this.lateAnswers.inc({ ...labels, recorded }, 0);
      this.lateSuccesses.inc({ ...labels, recorded }, 0);
    }
    this.circuit(provider, circuit);
  }

  lateAnswer(channel: string, provider: string, recorded: boolean): void {
    this.lateAnswers.inc({ ...this.item(channel, provider), recorded: String(recorded) });
  }

  lateSuccess(channel: string, provider: string, recorded: boolean): void {
    this.lateSuccesses.inc({ ...this.item(channel, provider), recorded: String(recorded) });
  }

  callsInFlight(calls: number): void {
    this.callsInFlightGauge.set(calls);
  }

  claimLapsed(channel: string): void {
    this.claimsLapsed.inc({ channel: this.channels.of(channel) });
  }

  claimLost(channel: string): void {
    this.claimsLost.inc({ channel: this.channels.of(channel) });
  }

  statementRetried(statement: RetriedStatement): void {
    this.statementRetries.inc({ statement });
  }

  databaseClientError(): void {
    this.databaseClientErrors.inc();
  }

  itemFailed(channel: string): void {
    this.itemErrors.inc({ channel: this.channels.of(channel) });
  }

  cycleSkippedForLease(): void {
    this.leaseSkipped.inc();
  }

  cycleCompleted(at: Date, durationMs: number): void {
    this.cycleDuration.observe(durationMs);
    this.lastCycleTimestamp.set(at.getTime() / 1000);
  }

  claimed(durationMs: number): void {
    this.claimDuration.observe(durationMs);
  }

  settled(durationMs: number): void {
    this.settleDuration.observe(durationMs);
  }

  /** Replaces the whole gauge, so a channel that no longer waits drops to absent rather than staying stale. */
  waitingRows(perChannel: ReadonlyArray<{ channel: string; rows: number }>): void {
    replace(this.channelDisabledRows, this.sumByChannelLabel(perChannel));
  }

  backlog(perChannel: ReadonlyArray<{ channel: string; rows: number }>): void {
    replace(this.failedBacklog, this.sumByChannelLabel(perChannel));
  }

  /** Channels left out of the cycle, counted per reason (every reason present, 0 when none). */
  channelsExcluded(reasons: ReadonlyMap<ChannelExclusionReason, number>): void {
    this.channelsExcludedGauge.reset();
    for (const [reason, channels] of reasons) this.channelsExcludedGauge.set({ reason }, channels);
  }

  /**
   * A provider beyond the label limit shares `_other` with the others there:
   * that series shows the worst of their states, so an open circuit is never
   * hidden by another provider's closed one.
   */
  circuit(provider: string, state: CircuitState): void {
    const label = this.providers.of(provider);
    if (label !== OVERFLOW_LABEL_VALUE) {
      this.circuitState.set({ provider: label }, CIRCUIT_VALUE[state]);
      return;
    }
    this.overflowCircuits.set(provider, CIRCUIT_VALUE[state]);
    this.circuitState.set({ provider: label }, Math.max(...this.overflowCircuits.values()));
  }

  private item(channel: string, provider: string): { channel: string; provider: string } {
    return { channel: this.channels.of(channel), provider: this.providers.of(provider) };
  }

  private sumByChannelLabel(
    perChannel: ReadonlyArray<{ channel: string; rows: number }>,
  ): Map<string, number> {
    const sums = new Map<string, number>();
    for (const { channel, rows } of perChannel) {
      const label = this.channels.of(channel);
      sums.set(label, (sums.get(label) ?? 0) + rows);
    }
    return sums;
  }
}

function replace(gauge: Gauge<string>, byChannel: ReadonlyMap<string, number>): void {
  gauge.reset();
  for (const [channel, value] of byChannel) gauge.set({ channel }, value);
}

/** The metric of that name already in the registry (a second app in one process), if any. */
function existing<M>(registry: Registry, name: string): M | undefined {
  return registry.getSingleMetric(name) as M | undefined;
}
