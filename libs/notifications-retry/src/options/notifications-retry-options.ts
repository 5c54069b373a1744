import type { Registry } from 'prom-client';
import type { OutboxRelayOptions, ResolvedOutboxRelayOptions } from './outbox-relay-options';

/** What a host passes to `NotificationsRetryModule.forRoot()` / `forRootAsync()`. */
export interface NotificationsRetryModuleOptions {
  /** Run cycles on the schedule. `runCycle()` works either way. Default true. */
  enabled?: boolean;
  /** Six-field cron expression, evaluated in UTC. Default every minute at second 0. */
  cron?: string;
  /** Rows claimed per cycle at most. Default 200. */
  batchSize?: number;
  /**
   * Keep claiming batches while they come back full and the deadline allows, to
   * drain a backlog after an outage. Default false: `batchSize` rows per cycle.
   */
  drain?: boolean;
  /**
   * Provider calls in flight at once (1 to 10 000). Calls hold no database
   * connection: the pool only serves the short claims and outcome writes.
   * Default 200.
   */
  concurrency?: number;
  /**
   * Send each row's statements as named prepared statements, parsed and planned
   * once per connection. Default `'auto'`: named, unless the first connection
   * shows a pooler between the app and PostgreSQL (its backend key is not the
   * server process's), as PgBouncer in transaction mode does; the decision is
   * logged once (`prepared-statements`). `true` names them always (PgBouncer
   * 1.21+ with `max_prepared_statements` > 0), `false` never. Whatever the
   * setting, a named statement the connection turns out not to keep (SQLSTATE
   * 26000 or 42P05) switches this process to unnamed statements.
   */
  preparedStatements?: PreparedStatementsOption;
  /** Default `notifications:retry-worker`. */
  lockKey?: string;
  /**
   * Lease time to live, by the database clock. Must exceed `maxCycleDurationMs`
   * + `settleMarginMs` + 5 000 (start-up fails otherwise): a call started at
   * the deadline must end and be written inside the lease. A channel whose
   * `timeout_ms` + `settleMarginMs` exceeds `lockTtlMs` − `maxCycleDurationMs`
   * − 5 000 is left out of every cycle (`timeout-exceeds-lease`, warned at
   * start). Default 90 000.
   */
  lockTtlMs?: number;
  /** No row is claimed after this long into a cycle. Default 45 000. */
  maxCycleDurationMs?: number;
  /**
   * On application shutdown, claiming stops at once and provider calls in
   * flight may still finish (and be written) for this long. Calls still running
   * then are cut: their claims are handed back at once, status, attempts and
   * due time unchanged, so another instance takes them without waiting for the
   * claim to lapse (the provider may still have delivered: at least once,
   * deduplicated by NotificationId). Shutdown then waits for the last writes
   * and the lease's release. Keep it, plus a few seconds, under the platform's
   * termination grace period. Default 10 000.
   */
  shutdownGraceMs?: number;
  /**
   * How long after a channel's timeout the provider's answer is still awaited
   * and taken as the outcome (the adapter's signal fires at the timeout). A
   * provider that delivered and answered a little late is then recorded as
   * Sent instead of being retried, or failed for good on its last attempt.
   * Every channel needs timeout + margin to fit the lease. Default 2 000.
   */
  settleMarginMs?: number;
  /**
   * /health reports the worker down once no instance has completed a cycle for
   * this many schedule intervals, as the lease row records it (a tick skipped
   * for a held lease does not count), and a process this long after its start.
   * Default 3.
   */
  healthStaleMultiple?: number;
  /** Lease owner name of this instance. Default host name, pid and a random suffix. */
  instanceId?: string;
  /**
   * How long the cycle log (`notification_retry_cycles`, one row per completed
   * cycle, what the operator console's cycle page shows) keeps a row. The
   * cycle owner deletes older rows in small batches, at most once a minute.
   * From 60 000 (a minute) to 366 days. Default 604 800 000 (7 days).
   */
  cycleLogRetentionMs?: number;
  /** Feature flags of the built-in stub adapters for external channels. All off by default. */
  stubProviders?: { email?: boolean; sms?: boolean; push?: boolean };
  /** Per-provider circuit breaker (opossum). */
  circuitBreaker?: CircuitBreakerOptions;
  /** Where the metrics go and how many label values they may have. */
  metrics?: MetricsOptions;
  /** The relay that publishes `notification_outbox` (off by default; see docs/outbox-relay.md). */
  outboxRelay?: OutboxRelayOptions;
}

export interface MetricsOptions {
  /** The prom-client registry the library declares its metrics in. Default: prom-client's default registry. */
  registry?: Registry;
  /**
   * The most distinct `channel` (and, separately, `provider`) label values this
   * process reports; channels seen after that are summed under `_other`, so a
   * catalog of thousands of channels cannot grow the series without bound.
   * Default 50.
   */
  maxLabelValues?: number;
}

export interface CircuitBreakerOptions {
  /** Default true. */
  enabled?: boolean;
  /** Failure rate (%) over the rolling window that opens the circuit. Default 50. */
  errorThresholdPercentage?: number;
  /** Calls in the window before the rate is judged at all. Default 10. */
  volumeThreshold?: number;
  /** How long an open circuit waits before letting one probe through. Default 60 000. */
  resetTimeoutMs?: number;
  /** The rolling window the failure rate is computed over. Default 120 000. */
  rollingWindowMs?: number;
}

/** Named prepared statements: always, never, or unless a pooler is detected at start. */
export type PreparedStatementsOption = boolean | 'auto';

/** The options after defaults and validation. */
export interface ResolvedNotificationsRetryOptions {
  readonly enabled: boolean;
  readonly cron: string;
  readonly batchSize: number;
  readonly drain: boolean;
  readonly concurrency: number;
  readonly preparedStatements: PreparedStatementsOption;
  readonly lockKey: string;
  readonly lockTtlMs: number;
  readonly maxCycleDurationMs: number;
  readonly shutdownGraceMs: number;
  readonly settleMarginMs: number;
  readonly healthStaleMultiple: number;
  /** The longest gap between two runs of `cron`, worked out at start. */
  readonly scheduleIntervalMs: number;
  readonly instanceId: string;
  readonly cycleLogRetentionMs: number;
  readonly stubProviders: {
    readonly email: boolean;
    readonly sms: boolean;
    readonly push: boolean;
  };
  readonly circuitBreaker: Readonly<Required<CircuitBreakerOptions>>;
  readonly metrics: Readonly<Required<MetricsOptions>>;
  readonly outboxRelay: ResolvedOutboxRelayOptions;
}
