import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import type { OutboxRelayOptions, ResolvedOutboxRelayOptions } from './outbox-relay-options';

/** Room after the publish timeout for the write that records the outcome, inside the claim. */
export const CLAIM_WRITE_MARGIN_MS = 2_000;

const KNOWN = new Set<keyof OutboxRelayOptions>([
  'enabled',
  'batchSize',
  'pollIntervalMs',
  'publishTimeoutMs',
  'claimTtlMs',
  'backoffBaseMs',
  'backoffMaxMs',
  'retentionMs',
  'retentionBatchSize',
  'retentionIntervalMs',
]);

const DAY_MS = 86_400_000;

/** Defaults and validation of `outboxRelay`; errors name `outboxRelay.<option>` and the value. */
export function resolveOutboxRelayOptions(value: unknown): ResolvedOutboxRelayOptions {
  if (
    value !== undefined &&
    (typeof value !== 'object' || value === null || Array.isArray(value))
  ) {
    throw new InvalidModuleOptionsError('outboxRelay', value, 'must be an object');
  }
  const options = (value ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(options)) {
    if (!KNOWN.has(name as keyof OutboxRelayOptions)) {
      throw new InvalidModuleOptionsError(
        `outboxRelay.${name}`,
        options[name],
        'is not a known option (a typo?)',
      );
    }
  }
  const enabled = options.enabled ?? false;
  if (typeof enabled !== 'boolean') {
    throw new InvalidModuleOptionsError('outboxRelay.enabled', enabled, 'must be a boolean');
  }
  const int = (name: keyof OutboxRelayOptions, fallback: number, min: number, max: number) =>
    integer(`outboxRelay.${name}`, options[name], fallback, min, max);
  const publishTimeoutMs = int('publishTimeoutMs', 10_000, 1, 600_000);
  const claimTtlMs = int('claimTtlMs', 30_000, 1, 3_600_000);
  if (claimTtlMs <= publishTimeoutMs + CLAIM_WRITE_MARGIN_MS) {
    throw new InvalidModuleOptionsError(
      'outboxRelay.claimTtlMs',
      claimTtlMs,
      `must exceed publishTimeoutMs (${publishTimeoutMs}) + ${CLAIM_WRITE_MARGIN_MS} ms = ${publishTimeoutMs + CLAIM_WRITE_MARGIN_MS}, or a claim could lapse while its publish is still being recorded and another relay publish the same events at the same time`,
    );
  }
  const backoffBaseMs = int('backoffBaseMs', 1_000, 1, DAY_MS);
  const backoffMaxMs = int('backoffMaxMs', 60_000, 1, DAY_MS);
  if (backoffMaxMs < backoffBaseMs) {
    throw new InvalidModuleOptionsError(
      'outboxRelay.backoffMaxMs',
      backoffMaxMs,
      `must be at least backoffBaseMs (${backoffBaseMs})`,
    );
  }
  return {
    enabled,
    batchSize: int('batchSize', 100, 1, 1_000),
    pollIntervalMs: int('pollIntervalMs', 5_000, 10, 600_000),
    publishTimeoutMs,
    claimTtlMs,
    backoffBaseMs,
    backoffMaxMs,
    retentionMs: int('retentionMs', 7 * DAY_MS, 60_000, 3_650 * DAY_MS),
    retentionBatchSize: int('retentionBatchSize', 500, 1, 10_000),
    retentionIntervalMs: int('retentionIntervalMs', 60_000, 100, DAY_MS),
  };
}

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidModuleOptionsError(name, value, `must be an integer from ${min} to ${max}`);
  }
  return value;
}
