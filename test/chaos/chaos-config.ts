import type { AddressKind } from '../support/personal-data';

/**
 * What the chaos runner and its instances share: the channels and their
 * providers, the worker's short schedule, and how an instance is configured
 * (one JSON environment variable, so a restart is the same command again).
 */

/** The lease the library takes by default; the audit trigger reads this row. */
export const CHAOS_LOCK_KEY = 'notifications:retry-worker';

/** application_name (and lease owner) prefix of the instances' worker connections. */
export const WORKER_APP_PREFIX = 'chaos-worker-';
/** application_name prefix of the ledger's own connections: never terminated by the runner. */
export const LEDGER_APP_PREFIX = 'chaos-ledger-';

export const INSTANCE_CONFIG_ENV = 'CHAOS_INSTANCE_CONFIG';

export interface ChaosChannel {
  readonly key: string;
  readonly providerKey: string;
  readonly maxAttempts: number;
  readonly backoffKind: 'Fixed' | 'Exponential';
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Per-call timeout; the adapter's hangs outlast it. */
  readonly timeoutMs: number;
  readonly rateLimitPerSec: number | null;
  readonly maxConcurrency: number | null;
  /** What the seeded recipient addresses look like. */
  readonly addressKind: AddressKind;
}

/** Several channels, each served by its own fault-injecting adapter (provider key). */
export const CHAOS_CHANNELS: readonly ChaosChannel[] = [
  {
    key: 'email',
    providerKey: 'chaos-email',
    maxAttempts: 4,
    backoffKind: 'Exponential',
    backoffBaseMs: 200,
    backoffMaxMs: 1_500,
    timeoutMs: 300,
    rateLimitPerSec: null,
    maxConcurrency: null,
    addressKind: 'email',
  },
  {
    key: 'sms',
    providerKey: 'chaos-sms',
    maxAttempts: 3,
    backoffKind: 'Fixed',
    backoffBaseMs: 400,
    backoffMaxMs: 400,
    timeoutMs: 250,
    rateLimitPerSec: null,
    maxConcurrency: 4,
    addressKind: 'phone',
  },
  {
    key: 'push',
    providerKey: 'chaos-push',
    maxAttempts: 5,
    backoffKind: 'Exponential',
    backoffBaseMs: 100,
    backoffMaxMs: 1_000,
    timeoutMs: 300,
    rateLimitPerSec: null,
    maxConcurrency: null,
    addressKind: 'push-token',
  },
];

/** Retry-After the throttled answers carry. */
export const THROTTLE_RETRY_AFTER_MS = 300;

/**
 * The worker's schedule for the run: a cycle every second, short cycles and a
 * short lease, so a SIGKILLed lease owner blocks the others for seconds, not
 * minutes. The library requires lockTtlMs ≥ maxCycleDurationMs + 5 s + the
 * longest channel timeout + the settle margin: 7.7 s of the 8 s.
 */
export const CHAOS_WORKER = {
  cron: '* * * * * *',
  maxCycleDurationMs: 2_000,
  lockTtlMs: 8_000,
  shutdownGraceMs: 2_000,
  /**
   * The library's `settleMarginMs`: how long after the channel timeout (the
   * adapter's signal fires then) a call's answer is still awaited and taken as
   * its outcome. The late faults answer well inside it.
   */
  settleMarginMs: 400,
} as const;

/**
 * When the "hang past the timeout, then succeed" fault answers: this many ms
 * after the channel timeout, ignoring the signal. The upper end stays well
 * inside the settle margin (the ledger write before the answer needs its time).
 */
export const LATE_ANSWER_AFTER_TIMEOUT_MS = { min: 50, max: 250 } as const;

/**
 * When the "succeed after the settle margin" fault answers: this many ms after
 * the channel timeout and the settle margin, ignoring the signal. The worker
 * has written the attempt off by then; the call runs on and succeeds.
 */
export const ANSWER_AFTER_MARGIN_MS = { min: 100, max: 500 } as const;

/** When the "succeed after the signal fired" fault answers: this many ms after the abort. */
export const ANSWER_AFTER_ABORT_MS = { min: 5, max: 30 } as const;

/** Everything one instance process needs; passed as JSON in CHAOS_INSTANCE_CONFIG. */
export interface InstanceConfig {
  readonly databaseUrl: string;
  /** Lease owner name, and application_name of every worker connection. */
  readonly instanceId: string;
  readonly seed: number;
  readonly concurrency: number;
  readonly batchSize: number;
  /** Where this process writes its metric dumps and spans. */
  readonly metricsFile: string;
  readonly spansFile: string;
  /** The run's nats-server: the instances run the outbox relay with the NATS publisher. */
  readonly natsUrl: string | null;
}

/** The JetStream stream the chaos run's relays publish to (captures the dispatched topic). */
export const CHAOS_STREAM = 'CHAOS_DISPATCHED';

export function readInstanceConfig(env: NodeJS.ProcessEnv): InstanceConfig {
  const raw = env[INSTANCE_CONFIG_ENV];
  if (!raw) throw new Error(`${INSTANCE_CONFIG_ENV} is not set: the chaos runner starts instances`);
  return JSON.parse(raw) as InstanceConfig;
}
