import type { RetryBackoff } from './retry-backoff';

/** One channel as the worker uses it: a validated `notification_channels` row. */
export interface ChannelConfig {
  readonly key: string;
  readonly isEnabled: boolean;
  readonly providerKey: string;
  /** ≥ 1. A row with attempts ≥ maxAttempts is terminal (INV-NTF-7). */
  readonly maxAttempts: number;
  readonly backoff: RetryBackoff;
  /** Per provider call. */
  readonly timeoutMs: number;
  readonly rateLimitPerSec: number | null;
  readonly maxConcurrency: number | null;
}
