import type { NotificationsRetryModuleOptions } from '@pin/notifications-retry';

/**
 * The retry module's options from environment strings. The module checks types strictly
 * (`concurrency: "200"` stops start-up), so every string is parsed here; an unset or empty
 * variable leaves the module's default.
 */
export function retryOptionsFromEnv(env: NodeJS.ProcessEnv): NotificationsRetryModuleOptions {
  return {
    enabled: booleanFrom(env, 'RETRY_WORKER_ENABLED'),
    cron: textFrom(env, 'RETRY_CRON'),
    concurrency: integerFrom(env, 'RETRY_CONCURRENCY'),
    batchSize: integerFrom(env, 'RETRY_BATCH_SIZE'),
  };
}

function textFrom(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value; // the module validates the cron
}

function booleanFrom(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`${name} must be "true" or "false"; got ${JSON.stringify(value)}`);
}

function integerFrom(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) {
    throw new Error(`${name} must be a whole number; got ${JSON.stringify(value)}`);
  }
  return Number(value); // the module checks the range and names the option if it is out of it
}
