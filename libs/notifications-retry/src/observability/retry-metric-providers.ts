import type { Provider } from '@nestjs/common';
import {
  makeCounterProvider,
  makeGaugeProvider,
  makeHistogramProvider,
} from '@willsoto/nestjs-prometheus';
import { RetryMetricName as M } from './metric-names';

// Labels are bounded on purpose: channel and provider keys, never a tenant or a notification id.
const ITEM = ['channel', 'provider'];

/**
 * The library's metrics, in prom-client's default registry, so any host that
 * exposes /metrics (PrometheusModule or its own handler) serves them.
 */
export const retryMetricProviders: Provider[] = [
  makeCounterProvider({
    name: M.processed,
    help: 'Rows given an outcome by the retry worker',
    labelNames: ITEM,
  }),
  makeCounterProvider({ name: M.sent, help: 'Rows delivered (now Sent)', labelNames: ITEM }),
  makeCounterProvider({
    name: M.retried,
    help: 'Intermediate failures rescheduled by backoff',
    labelNames: ITEM,
  }),
  makeCounterProvider({
    name: M.terminalFailed,
    help: 'Rows failed for good (terminal Failed)',
    labelNames: ITEM,
  }),
  makeCounterProvider({
    name: M.deferred,
    help: 'Rows rescheduled without using an attempt (throttled or interrupted)',
    labelNames: ITEM,
  }),
  makeCounterProvider({
    name: M.itemErrors,
    help: 'Units of work that failed to commit; their rows stay due',
    labelNames: ['channel'],
  }),
  makeCounterProvider({
    name: M.lateAnswers,
    help: 'Provider answers after the channel timeout; recorded="true" inside the settle margin (the outcome), "false" after it (lost)',
    labelNames: [...ITEM, 'recorded'],
  }),
  makeCounterProvider({
    name: M.databaseClientErrors,
    help: "Errors emitted by the host DataSource's pg clients (a dropped connection), caught so they cannot crash the process",
  }),
  makeCounterProvider({
    name: M.leaseSkipped,
    help: 'Ticks skipped because another instance holds the lease',
  }),
  makeGaugeProvider({
    name: M.failedBacklog,
    help: 'Failed rows still awaiting a retry, as of the last cycle',
    labelNames: ['channel'],
  }),
  makeGaugeProvider({
    name: M.channelDisabledRows,
    help: 'Due rows left waiting because their channel is disabled, unconfigured, without provider or with its circuit open',
    labelNames: ['channel'],
  }),
  makeGaugeProvider({
    name: M.circuitState,
    help: 'Provider circuit: 0 closed, 1 half-open, 2 open',
    labelNames: ['provider'],
  }),
  makeGaugeProvider({
    name: M.lastCycleTimestamp,
    help: 'Unix time of the last completed cycle, or the last tick rightly skipped for another lease holder',
  }),
  makeHistogramProvider({
    name: M.cycleDuration,
    help: 'Duration of completed retry cycles in milliseconds',
    buckets: [100, 500, 1_000, 5_000, 10_000, 30_000, 45_000, 60_000, 90_000],
  }),
  makeHistogramProvider({
    name: M.lag,
    help: 'Delay between a row becoming due and its processing, in milliseconds',
    labelNames: ['channel'],
    buckets: [1_000, 5_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000],
  }),
];
