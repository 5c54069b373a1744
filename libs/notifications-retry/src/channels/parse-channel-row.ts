import { InvalidChannelConfigError } from '../errors/invalid-channel-config.error';
import type { ChannelConfig } from './channel-config';
import type { RetryBackoff } from './retry-backoff';

/** The columns of `notification_channels` as the driver returns them, before validation. */
export interface ChannelRow {
  key: string;
  isEnabled: boolean;
  providerKey: string | null;
  maxAttempts: number | null;
  backoffKind: string | null;
  backoffBaseMs: number | null;
  backoffMaxMs: number | null;
  backoffMultiplier: number | null;
  /** Null or absent: jitter on, the default. */
  backoffJitter?: boolean | null;
  timeoutMs: number | null;
  rateLimitPerSec: number | null;
  maxConcurrency: number | null;
}

/**
 * Validates one row. The table has no CHECK constraints on purpose: operators
 * edit it by hand, and a typo must disable one channel with a readable error,
 * not fail the whole migration or the whole cycle.
 */
export function parseChannelRow(row: ChannelRow): ChannelConfig {
  const key = row.key;
  const fail = (column: string, value: unknown, requirement: string): never => {
    throw new InvalidChannelConfigError(key, column, value, requirement);
  };

  const providerKey = row.providerKey?.trim();
  if (!providerKey) fail('provider_key', row.providerKey, 'must be a non-empty string');

  const maxAttempts = row.maxAttempts;
  if (!isInteger(maxAttempts) || maxAttempts < 1) {
    fail('max_attempts', maxAttempts, 'must be an integer ≥ 1');
  }

  const baseMs = row.backoffBaseMs;
  if (!isInteger(baseMs) || baseMs < 0) {
    fail('backoff_base_ms', baseMs, 'must be an integer ≥ 0');
  }

  const jitter = row.backoffJitter ?? true;
  let backoff: RetryBackoff;
  switch (row.backoffKind) {
    case 'Fixed': {
      const maxMs = row.backoffMaxMs;
      if (maxMs !== null && (!isInteger(maxMs) || maxMs < (baseMs as number))) {
        fail('backoff_max_ms', maxMs, `must be null or an integer ≥ backoff_base_ms (${baseMs})`);
      }
      backoff = { kind: 'Fixed', baseMs: baseMs as number, maxMs, jitter };
      break;
    }
    case 'Exponential': {
      const maxMs = row.backoffMaxMs;
      if (!isInteger(maxMs) || maxMs < (baseMs as number)) {
        fail('backoff_max_ms', maxMs, `must be an integer ≥ backoff_base_ms (${baseMs})`);
      }
      const multiplier = row.backoffMultiplier;
      if (typeof multiplier !== 'number' || !Number.isFinite(multiplier) || multiplier < 1) {
        fail('backoff_multiplier', multiplier, 'must be a finite number ≥ 1');
      }
      backoff = {
        kind: 'Exponential',
        baseMs: baseMs as number,
        maxMs: maxMs as number,
        multiplier: multiplier as number,
        jitter,
      };
      break;
    }
    default:
      return fail('backoff_kind', row.backoffKind, 'must be "Fixed" or "Exponential"');
  }

  const timeoutMs = row.timeoutMs;
  if (!isInteger(timeoutMs) || timeoutMs < 1) {
    fail('timeout_ms', timeoutMs, 'must be an integer ≥ 1');
  }

  const rateLimitPerSec = row.rateLimitPerSec;
  // Number.isFinite is false for anything but a finite number (a string from the driver too).
  if (rateLimitPerSec !== null && (!Number.isFinite(rateLimitPerSec) || rateLimitPerSec <= 0)) {
    fail('rate_limit_per_sec', rateLimitPerSec, 'must be null or a number > 0');
  }

  const maxConcurrency = row.maxConcurrency;
  if (maxConcurrency !== null && (!isInteger(maxConcurrency) || maxConcurrency < 1)) {
    fail('max_concurrency', maxConcurrency, 'must be null or an integer ≥ 1');
  }

  return {
    key,
    isEnabled: row.isEnabled === true,
    providerKey: providerKey as string,
    maxAttempts: maxAttempts as number,
    backoff,
    timeoutMs: timeoutMs as number,
    rateLimitPerSec,
    maxConcurrency,
  };
}

/** Number.isSafeInteger is false for anything but a number (a string from the driver too). */
function isInteger(value: unknown): value is number {
  return Number.isSafeInteger(value);
}
