import { IN_APP_PROVIDER_KEY } from '../../libs/notifications-retry/src';

/** The demo provider adapter that succeeds, retries and fails terminally, mixed. */
export const DEMO_FLAKY_PROVIDER_KEY = 'demo-flaky';

/** One `notification_channels` row. */
export interface DemoChannel {
  readonly key: string;
  readonly isEnabled: boolean;
  readonly providerKey: string;
  readonly maxAttempts: number;
  readonly backoffKind: 'Fixed' | 'Exponential';
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number | null;
  readonly backoffMultiplier: number | null;
  readonly timeoutMs: number;
  readonly rateLimitPerSec: number | null;
  readonly maxConcurrency: number | null;
}

/**
 * A catalog that shows each way a channel can behave: `in_app` always delivers,
 * `email` goes through the flaky demo provider (sent, retried, terminal), `sms` is
 * switched off (its rows wait, reported as `channel-disabled`) and `push` uses the
 * built-in stub, whose feature flag the demo turns on. Backoffs start at one
 * minute so that a retried row comes due again a cycle or two later.
 */
export const DEMO_CHANNELS: readonly DemoChannel[] = [
  {
    key: 'in_app',
    isEnabled: true,
    providerKey: IN_APP_PROVIDER_KEY,
    maxAttempts: 3,
    backoffKind: 'Fixed',
    backoffBaseMs: 60_000,
    backoffMaxMs: null,
    backoffMultiplier: null,
    timeoutMs: 2_000,
    rateLimitPerSec: null,
    maxConcurrency: null,
  },
  {
    key: 'email',
    isEnabled: true,
    providerKey: DEMO_FLAKY_PROVIDER_KEY,
    maxAttempts: 4,
    backoffKind: 'Exponential',
    backoffBaseMs: 60_000,
    backoffMaxMs: 600_000,
    backoffMultiplier: 2,
    timeoutMs: 5_000,
    rateLimitPerSec: 20,
    maxConcurrency: 4,
  },
  {
    key: 'sms',
    isEnabled: false,
    providerKey: 'stub-sms',
    maxAttempts: 3,
    backoffKind: 'Exponential',
    backoffBaseMs: 120_000,
    backoffMaxMs: 1_800_000,
    backoffMultiplier: 3,
    timeoutMs: 5_000,
    rateLimitPerSec: 5,
    maxConcurrency: 2,
  },
  {
    key: 'push',
    isEnabled: true,
    providerKey: 'stub-push',
    maxAttempts: 5,
    backoffKind: 'Fixed',
    backoffBaseMs: 60_000,
    backoffMaxMs: null,
    backoffMultiplier: null,
    timeoutMs: 3_000,
    rateLimitPerSec: null,
    maxConcurrency: null,
  },
];
