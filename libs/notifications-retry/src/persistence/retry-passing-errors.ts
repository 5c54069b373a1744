import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPassingDatabaseError } from './database-error-kind';

/** Waits between tries: short first (a killed backend), longer for a lock held by a migration. */
export const PASSING_ERROR_BACKOFF = { firstMs: 25, maxMs: 500, multiplier: 2 } as const;

/** The wait before try `retry` (1-based), jittered ±20 % so that writers behind one lock spread out. */
export function passingErrorDelayMs(retry: number, sample: number): number {
  const { firstMs, maxMs, multiplier } = PASSING_ERROR_BACKOFF;
  const base = Math.min(maxMs, firstMs * multiplier ** (retry - 1));
  return Math.round(base * (0.8 + 0.4 * sample));
}

export interface PassingErrorRetry {
  /** `performance.now()` after which no try starts: the time its outcome is still worth something. */
  readonly giveUpAt: number;
  /** Told of every error that is tried again. */
  readonly onRetry?: (error: unknown, retry: number, delayMs: number) => void;
  /** Stops waiting (the try that failed is then thrown). */
  readonly signal?: AbortSignal;
}

/**
 * Runs `attempt` until it succeeds, fails for a reason that will not pass, or
 * the next try (its wait and as long as the last try took) would not end by
 * `giveUpAt`: then the last error is thrown. Only for statements that are one
 * atomic step (autocommit) and safe to send twice: a try that failed with a
 * lock or statement timeout changed nothing, but one whose connection was lost
 * may have committed before its reply was lost, so the statement must make
 * its repeat harmless itself (the cycle's match on the claim token does: a
 * repeat of a committed write matches nothing).
 */
export async function retryPassingErrors<T>(
  attempt: () => Promise<T>,
  retry: PassingErrorRetry,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    const startedAt = performance.now();
    try {
      return await attempt();
    } catch (error) {
      if (!isPassingDatabaseError(error) || retry.signal?.aborted) throw error;
      const delayMs = passingErrorDelayMs(tries, Math.random());
      const triedMs = performance.now() - startedAt;
      if (performance.now() + delayMs + triedMs >= retry.giveUpAt) throw error;
      retry.onRetry?.(error, tries, delayMs);
      await sleep(delayMs, undefined, { signal: retry.signal }).catch(() => undefined);
      if (retry.signal?.aborted) throw error;
    }
  }
}
