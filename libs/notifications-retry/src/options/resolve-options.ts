import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { CronTime, validateCronExpression } from 'cron';
import { register, type Registry } from 'prom-client';
import { LEASE_SAFETY_MARGIN_MS } from './lease-allowance';
import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import { resolveOutboxRelayOptions } from './resolve-outbox-relay-options';
import type {
  CircuitBreakerOptions,
  NotificationsRetryModuleOptions,
  PreparedStatementsOption,
  ResolvedNotificationsRetryOptions,
} from './notifications-retry-options';

export const DEFAULT_LOCK_KEY = 'notifications:retry-worker';
/**
 * Provider calls in flight by default: calls hold no connection, so the bound
 * is the providers' and the process's; 200 keeps a 200 ms provider at about
 * 1,000 rows/s (docs/benchmarks.md).
 */
export const DEFAULT_CONCURRENCY = 200;
export const MAX_CONCURRENCY = 10_000;
const DAY_MS = 24 * 3_600_000;
/** A week of cycles: enough to compare today with last week's same day. */
export const DEFAULT_CYCLE_LOG_RETENTION_MS = 7 * DAY_MS;

const KNOWN_OPTIONS = new Set<string>([
  'enabled',
  'cron',
  'batchSize',
  'drain',
  'concurrency',
  'preparedStatements',
  'lockKey',
  'lockTtlMs',
  'maxCycleDurationMs',
  'shutdownGraceMs',
  'settleMarginMs',
  'healthStaleMultiple',
  'instanceId',
  'cycleLogRetentionMs',
  'stubProviders',
  'circuitBreaker',
  'metrics',
  'outboxRelay',
]);

const CIRCUIT_BREAKER_OPTIONS = new Set<string>([
  'enabled',
  'errorThresholdPercentage',
  'volumeThreshold',
  'resetTimeoutMs',
  'rollingWindowMs',
]);

/**
 * Applies defaults and validates. Runs while the module is being built, so a bad
 * value stops start-up with an error that names the option and the value.
 */
export function resolveOptions(
  raw: NotificationsRetryModuleOptions | undefined,
): ResolvedNotificationsRetryOptions {
  const options: Record<string, unknown> = { ...(raw ?? {}) };
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      throw new InvalidModuleOptionsError(name, options[name], 'is not a known option (a typo?)');
    }
  }

  const enabled = booleanOption('enabled', options.enabled, true);
  const cron = stringOption('cron', options.cron, '0 * * * * *');
  const validation = validateCronExpression(cron);
  if (!validation.valid) {
    throw new InvalidModuleOptionsError('cron', cron, 'must be a valid cron expression');
  }
  const batchSize = integerOption('batchSize', options.batchSize, 200, 1, 10_000);
  const drain = booleanOption('drain', options.drain, false);
  const concurrency = integerOption(
    'concurrency',
    options.concurrency,
    DEFAULT_CONCURRENCY,
    1,
    MAX_CONCURRENCY,
  );
  const preparedStatements = preparedStatementsOption(options.preparedStatements);
  const lockKey = stringOption('lockKey', options.lockKey, DEFAULT_LOCK_KEY);
  const maxCycleDurationMs = integerOption(
    'maxCycleDurationMs',
    options.maxCycleDurationMs,
    45_000,
    1,
    24 * 3_600_000,
  );
  const lockTtlMs = integerOption('lockTtlMs', options.lockTtlMs, 90_000, 1, 24 * 3_600_000);
  const healthStaleMultiple = integerOption(
    'healthStaleMultiple',
    options.healthStaleMultiple,
    3,
    1,
    1_000,
  );
  const shutdownGraceMs = integerOption(
    'shutdownGraceMs',
    options.shutdownGraceMs,
    10_000,
    0,
    3_600_000,
  );
  const settleMarginMs = integerOption('settleMarginMs', options.settleMarginMs, 2_000, 0, 600_000);
  // A call started at the deadline may run for a channel's timeout and the settle margin, then be
  // written: all of it inside the lease, or no channel could ever take part in a cycle.
  const leaseFloorMs = maxCycleDurationMs + settleMarginMs + LEASE_SAFETY_MARGIN_MS;
  if (lockTtlMs <= leaseFloorMs) {
    throw new InvalidModuleOptionsError(
      'lockTtlMs',
      lockTtlMs,
      `must exceed maxCycleDurationMs (${maxCycleDurationMs}) + settleMarginMs (${settleMarginMs}) + ${LEASE_SAFETY_MARGIN_MS} ms = ${leaseFloorMs}, or a slow cycle would outlive its lease and no channel timeout would fit`,
    );
  }
  const instanceId = stringOption(
    'instanceId',
    options.instanceId,
    `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
  );
  const cycleLogRetentionMs = integerOption(
    'cycleLogRetentionMs',
    options.cycleLogRetentionMs,
    DEFAULT_CYCLE_LOG_RETENTION_MS,
    60_000,
    366 * DAY_MS,
  );
  const stubProviders = stubProvidersOption(options.stubProviders);
  const circuitBreaker = circuitBreakerOption(options.circuitBreaker);
  const metrics = metricsOption(options.metrics);
  const outboxRelay = resolveOutboxRelayOptions(options.outboxRelay);

  return {
    enabled,
    cron,
    batchSize,
    drain,
    concurrency,
    preparedStatements,
    lockKey,
    lockTtlMs,
    maxCycleDurationMs,
    shutdownGraceMs,
    settleMarginMs,
    healthStaleMultiple,
    scheduleIntervalMs: scheduleIntervalMs(cron),
    instanceId,
    cycleLogRetentionMs,
    stubProviders,
    circuitBreaker,
    metrics,
    outboxRelay,
  };
}

function booleanOption(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new InvalidModuleOptionsError(name, value, 'must be a boolean');
  return value;
}

function preparedStatementsOption(value: unknown): PreparedStatementsOption {
  if (value === undefined) return 'auto';
  if (typeof value !== 'boolean' && value !== 'auto') {
    throw new InvalidModuleOptionsError(
      'preparedStatements',
      value,
      "must be true, false or 'auto'",
    );
  }
  return value;
}

function stringOption(name: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidModuleOptionsError(name, value, 'must be a non-empty string');
  }
  return value;
}

function integerOption(
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidModuleOptionsError(name, value, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

function stubProvidersOption(value: unknown): ResolvedNotificationsRetryOptions['stubProviders'] {
  if (value === undefined) return { email: false, sms: false, push: false };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidModuleOptionsError('stubProviders', value, 'must be an object of booleans');
  }
  const flags = value as Record<string, unknown>;
  for (const name of Object.keys(flags)) {
    if (!['email', 'sms', 'push'].includes(name)) {
      throw new InvalidModuleOptionsError(
        `stubProviders.${name}`,
        flags[name],
        'is not a known stub (email, sms, push)',
      );
    }
  }
  return {
    email: booleanOption('stubProviders.email', flags.email, false),
    sms: booleanOption('stubProviders.sms', flags.sms, false),
    push: booleanOption('stubProviders.push', flags.push, false),
  };
}

function circuitBreakerOption(value: unknown): Required<CircuitBreakerOptions> {
  if (
    value !== undefined &&
    (typeof value !== 'object' || value === null || Array.isArray(value))
  ) {
    throw new InvalidModuleOptionsError('circuitBreaker', value, 'must be an object');
  }
  const options = (value ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(options)) {
    if (!CIRCUIT_BREAKER_OPTIONS.has(name)) {
      throw new InvalidModuleOptionsError(
        `circuitBreaker.${name}`,
        options[name],
        'is not a known option (a typo?)',
      );
    }
  }
  return {
    enabled: booleanOption('circuitBreaker.enabled', options.enabled, true),
    errorThresholdPercentage: integerOption(
      'circuitBreaker.errorThresholdPercentage',
      options.errorThresholdPercentage,
      50,
      1,
      100,
    ),
    volumeThreshold: integerOption(
      'circuitBreaker.volumeThreshold',
      options.volumeThreshold,
      10,
      1,
      100_000,
    ),
    resetTimeoutMs: integerOption(
      'circuitBreaker.resetTimeoutMs',
      options.resetTimeoutMs,
      60_000,
      1,
      24 * 3_600_000,
    ),
    rollingWindowMs: integerOption(
      'circuitBreaker.rollingWindowMs',
      options.rollingWindowMs,
      120_000,
      10,
      24 * 3_600_000,
    ),
  };
}

function metricsOption(value: unknown): ResolvedNotificationsRetryOptions['metrics'] {
  if (
    value !== undefined &&
    (typeof value !== 'object' || value === null || Array.isArray(value))
  ) {
    throw new InvalidModuleOptionsError('metrics', value, 'must be an object');
  }
  const options = (value ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(options)) {
    if (name !== 'registry' && name !== 'maxLabelValues') {
      throw new InvalidModuleOptionsError(
        `metrics.${name}`,
        options[name],
        'is not a known option (a typo?)',
      );
    }
  }
  const registry = options.registry ?? register;
  if (!isRegistry(registry)) {
    throw new InvalidModuleOptionsError(
      'metrics.registry',
      registry,
      "must be a prom-client Registry (new Registry() from 'prom-client')",
    );
  }
  return {
    registry,
    maxLabelValues: integerOption('metrics.maxLabelValues', options.maxLabelValues, 50, 1, 10_000),
  };
}

/** Duck-typed: a registry from another copy of prom-client works as well. */
function isRegistry(value: unknown): value is Registry {
  const candidate = value as Partial<Registry> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.registerMetric === 'function' &&
    typeof candidate.getSingleMetric === 'function' &&
    typeof candidate.metrics === 'function'
  );
}

/** The longest of the next few gaps between runs: an irregular schedule is judged by its longest pause. */
function scheduleIntervalMs(cron: string): number {
  const runs = new CronTime(cron, 'UTC').sendAt(6).map((run) => run.toMillis());
  let longest = 0;
  for (let i = 1; i < runs.length; i++) longest = Math.max(longest, runs[i] - runs[i - 1]);
  return longest;
}
