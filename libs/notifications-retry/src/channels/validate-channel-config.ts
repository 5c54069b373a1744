import { InvalidChannelCatalogError } from '../errors/invalid-channel-catalog.error';
import { InvalidChannelConfigError } from '../errors/invalid-channel-config.error';
import type { ChannelConfig } from './channel-config';
import { parseChannelRow, type ChannelRow } from './parse-channel-row';

/** `notification_channels` column → the `ChannelConfig` field it becomes, for error messages. */
const FIELD_OF_COLUMN: Readonly<Record<string, string>> = {
  provider_key: 'providerKey',
  max_attempts: 'maxAttempts',
  backoff_kind: 'backoff.kind',
  backoff_base_ms: 'backoff.baseMs',
  backoff_max_ms: 'backoff.maxMs',
  backoff_multiplier: 'backoff.multiplier',
  timeout_ms: 'timeoutMs',
  rate_limit_per_sec: 'rateLimitPerSec',
  max_concurrency: 'maxConcurrency',
};

/**
 * Checks one entry a `ChannelCatalog` returned by the same rules the default
 * catalog applies to a `notification_channels` row (`parseChannelRow`), and
 * returns it normalised (provider key trimmed, absent optional limits as null).
 * Throws `InvalidChannelConfigError` naming the field, the value and `source`.
 *
 * Backoff jitter is on unless the entry says `jitter: false`: the same default
 * as the table's column and as `RetryBackoff`.
 */
export function validateChannelConfig(entry: unknown, source: string): ChannelConfig {
  const config = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<
    string,
    unknown
  >;
  const keyValue = config.key;
  const channel = typeof keyValue === 'string' ? keyValue : String(keyValue);
  const fail = (field: string, value: unknown, requirement: string): never => {
    throw new InvalidChannelConfigError(channel, field, value, requirement, source);
  };
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    fail('(entry)', entry, 'must be a ChannelConfig object');
  }
  if (typeof keyValue !== 'string' || keyValue.trim() === '') {
    fail('key', keyValue, 'must be a non-empty string');
  }
  if (typeof config.isEnabled !== 'boolean')
    fail('isEnabled', config.isEnabled, 'must be a boolean');
  if (typeof config.providerKey !== 'string') {
    fail('providerKey', config.providerKey, 'must be a non-empty string');
  }
  const backoff = config.backoff;
  if (typeof backoff !== 'object' || backoff === null || Array.isArray(backoff)) {
    fail('backoff', backoff, 'must be a RetryBackoff object');
  }
  const b = backoff as Record<string, unknown>;
  if (b.jitter !== undefined && typeof b.jitter !== 'boolean') {
    fail('backoff.jitter', b.jitter, 'must be a boolean when given');
  }

  let parsed: ChannelConfig;
  try {
    parsed = parseChannelRow({
      key: channel,
      isEnabled: config.isEnabled as boolean,
      providerKey: config.providerKey as string,
      maxAttempts: config.maxAttempts as ChannelRow['maxAttempts'],
      backoffKind: b.kind as ChannelRow['backoffKind'],
      backoffBaseMs: b.baseMs as ChannelRow['backoffBaseMs'],
      backoffMaxMs: (b.maxMs ?? null) as ChannelRow['backoffMaxMs'],
      backoffMultiplier: (b.multiplier ?? null) as ChannelRow['backoffMultiplier'],
      backoffJitter: b.jitter as boolean | undefined,
      timeoutMs: config.timeoutMs as ChannelRow['timeoutMs'],
      rateLimitPerSec: (config.rateLimitPerSec ?? null) as ChannelRow['rateLimitPerSec'],
      maxConcurrency: (config.maxConcurrency ?? null) as ChannelRow['maxConcurrency'],
    });
  } catch (error) {
    if (!(error instanceof InvalidChannelConfigError)) throw error;
    return fail(FIELD_OF_COLUMN[error.column] ?? error.column, error.value, error.requirement);
  }
  return parsed;
}

/**
 * What a catalog returned, validated entry by entry: an invalid entry is
 * handed to `onInvalid` and left out (its rows wait), the rest are returned.
 * A result that is not an array at all throws `InvalidChannelCatalogError`.
 * Idempotent: validating an already validated list returns an equal list.
 */
export function validateCatalogChannels(
  result: unknown,
  catalogName: string,
  onInvalid: (error: InvalidChannelConfigError) => void,
): ChannelConfig[] {
  if (!Array.isArray(result)) throw new InvalidChannelCatalogError(catalogName, result);
  const source = `ChannelCatalog ${catalogName} channel`;
  const channels: ChannelConfig[] = [];
  for (const entry of result as unknown[]) {
    try {
      channels.push(validateChannelConfig(entry, source));
    } catch (error) {
      if (!(error instanceof InvalidChannelConfigError)) throw error;
      onInvalid(error);
    }
  }
  return channels;
}
