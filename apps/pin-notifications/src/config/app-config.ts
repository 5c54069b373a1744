import { validateCronExpression } from 'cron';
import type { NotificationsRetryModuleOptions } from '@pin/notifications-retry';
import { ENVIRONMENT_VARIABLES } from './environment-variables';
import { InvalidEnvironmentVariableError } from './invalid-environment-variable.error';
import { parseOutboxRelayConfig, type OutboxRelayConfig } from './outbox-relay-config';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Retry module options as the host passes them; concurrency always set, so the start line can say it. */
export type RetryWorkerOptions = NotificationsRetryModuleOptions & { readonly concurrency: number };

export interface AppConfig {
  readonly port: number;
  /** Null: no DATABASE_URL, start an embedded PostgreSQL (local runs only). */
  readonly databaseUrl: string | null;
  readonly retryWorker: RetryWorkerOptions;
  /** Null: not set, so seed only when the database is the embedded one. */
  readonly seedDemoData: boolean | null;
  readonly logLevel: LogLevel;
  /** ADMIN_TOKEN: turns the admin page and API on (null: off unless the host provides AdminAccess). */
  readonly adminToken: string | null;
  /** The outbox relay: on with the NATS JetStream publisher when NATS_URL is set. */
  readonly outboxRelay: OutboxRelayConfig;
}

/** Long enough that guessing it over HTTP is hopeless. */
export const MIN_ADMIN_TOKEN_LENGTH = 24;

/** The library's default (provider calls in flight; they hold no connection). */
export const DEFAULT_RETRY_CONCURRENCY = 200;

const STUB_CHANNELS = ['email', 'sms', 'push'] as const;

/**
 * Reads the app's configuration from the environment. Every value is checked
 * here, so a typo stops start-up with the variable's name and value instead of
 * surfacing later as odd behaviour. An empty variable counts as unset (compose
 * files and CI templates often pass `VAR=`).
 */
export function parseAppConfig(env: NodeJS.ProcessEnv): AppConfig {
  const databaseUrl = parseDatabaseUrl(env);
  const enabled = parseBoolean(env, 'RETRY_WORKER_ENABLED');
  const cron = read(env, 'RETRY_CRON');
  if (cron !== undefined && !validateCronExpression(cron).valid) {
    throw new InvalidEnvironmentVariableError(
      'RETRY_CRON',
      JSON.stringify(cron),
      'must be a cron expression (six fields with seconds, evaluated in UTC, e.g. "0 * * * * *")',
    );
  }
  const batchSize = parseInteger(env, 'RETRY_BATCH_SIZE', 1, 10_000);
  const concurrency =
    parseInteger(env, 'RETRY_CONCURRENCY', 1, 10_000) ?? DEFAULT_RETRY_CONCURRENCY;
  const logLevel = read(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new InvalidEnvironmentVariableError(
      'LOG_LEVEL',
      JSON.stringify(logLevel),
      `must be one of ${LOG_LEVELS.join(', ')}`,
    );
  }

  return {
    port: parseInteger(env, 'PORT', 0, 65_535) ?? 3000,
    databaseUrl,
    retryWorker: {
      enabled: enabled ?? true,
      cron,
      batchSize,
      concurrency,
      stubProviders: parseStubProviders(env),
    },
    seedDemoData: parseBoolean(env, 'SEED_DEMO_DATA') ?? null,
    logLevel: logLevel as LogLevel,
    adminToken: parseAdminToken(env),
    outboxRelay: parseOutboxRelayConfig((name) => read(env, name)),
  };
}

const DECLARED = new Set(
  ENVIRONMENT_VARIABLES.filter((v) => v.readBy === 'app-config').map((v) => v.name),
);

function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  // Keeps docs/configuration.md whole: a variable read here must be declared (and so documented).
  if (!DECLARED.has(name)) throw new Error(`${name} is read but not in ENVIRONMENT_VARIABLES`);
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function parseDatabaseUrl(env: NodeJS.ProcessEnv): string | null {
  const value = read(env, 'DATABASE_URL');
  if (value === undefined) {
    // The embedded database is thrown away on exit: in production that would be silent data loss.
    if (read(env, 'NODE_ENV') === 'production') {
      throw new InvalidEnvironmentVariableError(
        'DATABASE_URL',
        'nothing',
        'is required when NODE_ENV=production (without it the app starts a throw-away embedded PostgreSQL)',
      );
    }
    return null;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not shown at all: an unparsable URL cannot be stripped of its password reliably.
    throw new InvalidEnvironmentVariableError(
      'DATABASE_URL',
      'a value that is not a URL (not shown, it may contain a password)',
      'must be a postgres:// or postgresql:// URL',
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    // The scheme only: where the password sits in an unfamiliar URL is anyone's guess.
    throw new InvalidEnvironmentVariableError(
      'DATABASE_URL',
      `a ${JSON.stringify(url.protocol)} URL (the rest is not shown, it may contain a password)`,
      'must be a postgres:// or postgresql:// URL',
    );
  }
  return value;
}

function parseBoolean(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  switch (value.toLowerCase()) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      throw new InvalidEnvironmentVariableError(
        name,
        JSON.stringify(value),
        'must be true or false (or 1 or 0)',
      );
  }
}

function parseInteger(
  env: NodeJS.ProcessEnv,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  // Number() alone would accept "1e3", "0x10" and "12.0": only plain decimal digits are meant.
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new InvalidEnvironmentVariableError(
      name,
      JSON.stringify(value),
      `must be an integer from ${min} to ${max}`,
    );
  }
  return parsed;
}

function parseStubProviders(env: NodeJS.ProcessEnv): {
  email: boolean;
  sms: boolean;
  push: boolean;
} {
  const flags = { email: false, sms: false, push: false };
  const value = read(env, 'STUB_PROVIDERS');
  if (value === undefined) return flags;
  for (const item of value.split(',').map((part) => part.trim().toLowerCase())) {
    if (item === '') continue;
    if (!(STUB_CHANNELS as readonly string[]).includes(item)) {
      throw new InvalidEnvironmentVariableError(
        'STUB_PROVIDERS',
        JSON.stringify(value),
        `must be a comma-separated list of ${STUB_CHANNELS.join(', ')} ("${item}" is not one of them)`,
      );
    }
    flags[item as (typeof STUB_CHANNELS)[number]] = true;
  }
  return flags;
}

function parseAdminToken(env: NodeJS.ProcessEnv): string | null {
  const value = read(env, 'ADMIN_TOKEN');
  if (value === undefined) return null;
  if (value.length < MIN_ADMIN_TOKEN_LENGTH) {
    // The length only: even a too-short token is a secret.
    throw new InvalidEnvironmentVariableError(
      'ADMIN_TOKEN',
      `a value of ${value.length} characters (not shown)`,
      `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. openssl rand -base64 32)`,
    );
  }
  return value;
}
