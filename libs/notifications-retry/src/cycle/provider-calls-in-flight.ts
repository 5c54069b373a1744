import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { RetryMetrics } from '../observability/retry-metrics';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';

/** A call being tracked: what settles with it, and when it started (monotonic ms). */
interface TrackedCall {
  readonly settled: Promise<unknown>;
  readonly startedAt: number;
}

/**
 * Every provider call this instance has started and that has not settled yet,
 * by notification id, across cycles. A call written off at its timeout and
 * settle margin may still be running (an adapter that ignores its signal); the
 * cycle leaves its notification alone until it settles, so one instance never
 * has two calls in flight for one notification.
 *
 * An adapter call that never settles at all would keep its notification out
 * of every claim for good: after the lease TTL (longer than any call the
 * worker itself waits for) it is given up on (`provider-call-abandoned`) and
 * the notification may be sent again.
 */
@Injectable()
export class ProviderCallsInFlight {
  private readonly logger = new Logger('NotificationsRetryCycle');
  /** In the order the calls started, so the oldest is first: the next one to give up on. */
  private readonly calls = new Map<string, TrackedCall>();
  // One timer for every call, due when the oldest is to be given up on: a timer per call would
  // keep hundreds alive at once for a wait that almost never ends.
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly metrics: RetryMetrics,
  ) {}

  /** Records a call until `settled` settles, however it settles, or is given up on. */
  track(notificationId: string, settled: Promise<unknown>): void {
    // Delete first, so a call tracked again for a notification goes to the end of the order.
    this.calls.delete(notificationId);
    this.calls.set(notificationId, { settled, startedAt: performance.now() });
    this.metrics.callsInFlight(this.calls.size);
    this.sweep ??= this.sweepAfter(this.options.lockTtlMs);
    const settle = (): void => this.forget(notificationId, settled);
    settled.then(settle, settle);
  }

  /**
   * The notifications with a call in flight, for the claim to leave out: the
   * map's own keys, not a copy, as every claim asks.
   */
  notificationIds(): IterableIterator<string> {
    return this.calls.keys();
  }

  /** Settles once every call tracked now has settled (or been given up on), however each settles. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.calls.values()].map((call) => call.settled));
  }

  get size(): number {
    return this.calls.size;
  }

  private forget(notificationId: string, settled: Promise<unknown>): void {
    if (this.calls.get(notificationId)?.settled !== settled) return;
    this.calls.delete(notificationId);
    this.metrics.callsInFlight(this.calls.size);
  }

  private sweepAfter(delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.abandonOverdue(), delayMs);
    // A hung adapter must not keep the process alive at shutdown.
    timer.unref();
    return timer;
  }

  /** Gives up on every call older than the lease TTL, then waits for the next oldest. */
  private abandonOverdue(): void {
    this.sweep = null;
    const now = performance.now();
    for (const [notificationId, call] of this.calls) {
      const dueInMs = call.startedAt + this.options.lockTtlMs - now;
      if (dueInMs > 0) {
        this.sweep = this.sweepAfter(dueInMs);
        return;
      }
      this.forget(notificationId, call.settled);
      this.logger.warn({
        msg: 'provider-call-abandoned',
        event: 'provider-call-abandoned',
        notificationId,
        afterMs: this.options.lockTtlMs,
        note: 'the adapter call never settled; the notification may be sent again',
      });
    }
  }
}
