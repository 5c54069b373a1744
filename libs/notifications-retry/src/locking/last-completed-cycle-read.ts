import { Inject, Injectable } from '@nestjs/common';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { sqlState } from '../persistence/database-error-kind';
import type { CompletedCycleRecord } from './completed-cycle-record';
import { DistributedLock } from './distributed-lock';

/** How long /health waits for the record: the database ping next to it allows 1.5 s. */
export const COMPLETED_CYCLE_READ_TIMEOUT_MS = 1_000;

/** What the lock says about the last completed cycle, in a form /health can always answer with. */
export type CompletedCycleReading =
  | { readonly kind: 'recorded'; readonly record: CompletedCycleRecord }
  /** The lock keeps no record (a host's own lock without `lastCompletedCycle`). */
  | { readonly kind: 'not-kept' }
  /** The read failed or did not answer in time; `error` names why (no query parameters). */
  | { readonly kind: 'failed'; readonly error: string };

/**
 * Reads the lock's record of the last completed cycle for /health, bounded in
 * time and never more than one read at a time: a read that hangs (a frozen
 * server, a table lock) keeps one pooled connection, not one per probe, and
 * every probe meanwhile answers within the timeout.
 */
@Injectable()
export class LastCompletedCycleRead {
  private pending: Promise<CompletedCycleRecord> | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly lock: DistributedLock,
  ) {}

  async read(timeoutMs: number = COMPLETED_CYCLE_READ_TIMEOUT_MS): Promise<CompletedCycleReading> {
    // A lock given as a plain value may lack the optional method.
    const read = (this.lock as Partial<DistributedLock>).lastCompletedCycle;
    if (typeof read !== 'function') return { kind: 'not-kept' };
    this.pending ??= read.call(this.lock, this.options.lockKey).finally(() => {
      this.pending = null;
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`the read of the last completed cycle did not answer within ${timeoutMs} ms`),
          ),
        timeoutMs,
      );
    });
    try {
      return { kind: 'recorded', record: await Promise.race([this.pending, timeout]) };
    } catch (error) {
      return { kind: 'failed', error: describeError(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Name, code and message: what an operator needs to tell a refused connection
 * from a timeout. A connection error over several addresses is an
 * AggregateError with an empty message: its errors say what happened.
 */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = sqlState(error);
  const inner = error instanceof AggregateError ? error.errors.map(describeError).join('; ') : '';
  const message = error.message || inner || 'no message';
  return `${error.name}${code !== undefined ? ` ${code}` : ''}: ${message}`;
}
