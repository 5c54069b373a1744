import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { CircuitState } from '../circuit/circuit-state';
import type { ItemResult } from '../cycle/row-transition';
import { RetryMetricName as M } from './metric-names';

const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };

/** What the cycle records; one method per fact, so the cycle never handles prom-client types. */
@Injectable()
export class RetryMetrics {
  constructor(
    @InjectMetric(M.processed) private readonly processed: Counter<string>,
    @InjectMetric(M.sent) private readonly sent: Counter<string>,
    @InjectMetric(M.retried) private readonly retried: Counter<string>,
    @InjectMetric(M.terminalFailed) private readonly terminalFailed: Counter<string>,
    @InjectMetric(M.deferred) private readonly deferred: Counter<string>,
    @InjectMetric(M.itemErrors) private readonly itemErrors: Counter<string>,
    @InjectMetric(M.leaseSkipped) private readonly leaseSkipped: Counter<string>,
    @InjectMetric(M.failedBacklog) private readonly failedBacklog: Gauge<string>,
    @InjectMetric(M.channelDisabledRows) private readonly channelDisabledRows: Gauge<string>,
    @InjectMetric(M.circuitState) private readonly circuitState: Gauge<string>,
    @InjectMetric(M.lastCycleTimestamp) private readonly lastCycleTimestamp: Gauge<string>,
    @InjectMetric(M.cycleDuration) private readonly cycleDuration: Histogram<string>,
    @InjectMetric(M.lag) private readonly lag: Histogram<string>,
    @InjectMetric(M.lateAnswers) private readonly lateAnswers: Counter<string>,
    @InjectMetric(M.databaseClientErrors) private readonly databaseClientErrors: Counter<string>,
  ) {
    this.databaseClientErrors.inc(0);
  }

  itemProcessed(result: ItemResult, channel: string, provider: string, lagMs: number): void {
    const labels = { channel, provider };
    this.processed.inc(labels);
    if (result === 'sent') this.sent.inc(labels);
    else if (result === 'retried') this.retried.inc(labels);
    else if (result === 'terminal') this.terminalFailed.inc(labels);
    else this.deferred.inc(labels);
    this.lag.observe({ channel }, Math.max(0, lagMs));
  }

  /**
   * Starts every series of a channel at zero, so `increase()` counts its first
   * events after a restart and dashboards show zeros instead of gaps.
   */
  channelActive(channel: string, provider: string, circuit: CircuitState): void {
    const labels = { channel, provider };
    for (const counter of [
      this.processed,
      this.sent,
      this.retried,
      this.terminalFailed,
      this.deferred,
    ]) {
      counter.inc(labels, 0);
    }
    this.itemErrors.inc({ channel }, 0);
    for (const recorded of ['true', 'false']) this.lateAnswers.inc({ ...labels, recorded }, 0);
    this.circuit(provider, circuit);
  }

  lateAnswer(channel: string, provider: string, recorded: boolean): void {
    this.lateAnswers.inc({ channel, provider, recorded: String(recorded) });
  }

  databaseClientError(): void {
    this.databaseClientErrors.inc();
  }

  itemFailed(channel: string): void {
    this.itemErrors.inc({ channel });
  }

  cycleSkippedForLease(at: Date): void {
    this.leaseSkipped.inc();
    this.lastCycleTimestamp.set(at.getTime() / 1000);
  }

  cycleCompleted(at: Date, durationMs: number): void {
    this.cycleDuration.observe(durationMs);
    this.lastCycleTimestamp.set(at.getTime() / 1000);
  }

  /** Replaces the whole gauge, so a channel that no longer waits drops to absent rather than staying stale. */
  waitingRows(perChannel: ReadonlyArray<{ channel: string; rows: number }>): void {
    this.channelDisabledRows.reset();
    for (const { channel, rows } of perChannel) this.channelDisabledRows.set({ channel }, rows);
  }

  backlog(perChannel: ReadonlyArray<{ channel: string; rows: number }>): void {
    this.failedBacklog.reset();
    for (const { channel, rows } of perChannel) this.failedBacklog.set({ channel }, rows);
  }

  circuit(provider: string, state: CircuitState): void {
    this.circuitState.set({ provider }, CIRCUIT_VALUE[state]);
  }
}
