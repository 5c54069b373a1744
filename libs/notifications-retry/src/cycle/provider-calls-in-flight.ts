import { Inject, Injectable, Logger } from '@nestjs/common';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { RetryMetrics } from '../observability/retry-metrics';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';

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
  private readonly calls = new Map<string, Promise<unknown>>();

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly metrics: RetryMetrics,
  ) {}

  /** Records a call until `settled` settles, however it settles, or is given up on. */
  track(notificationId: string, settled: Promise<unknown>): void {
    this.calls.set(notificationId, settled);
    this.metrics.callsInFlight(this.calls.size);
    const abandon = setTimeout(() => {
      if (this.calls.get(notificationId) !== settled) return;
      this.forget(notificationId, settled);
      this.logger.warn({
        msg: 'provider-call-abandoned',
        event: 'provider-call-abandoned',
        notificationId,
        afterMs: this.options.lockTtlMs,
        note: 'the adapter call never settled; the notification may be sent again',
      });
    }, this.options.lockTtlMs);
    // A hung adapter must not keep the process alive at shutdown.
    abandon.unref();
    const settle = (): void => {
      clearTimeout(abandon);
      this.forget(notificationId, settled);
    };
    settled.then(settle, settle);
  }

  /** The notifications with a call in flight, for the claim to leave out. */
  notificationIds(): string[] {
    return [...this.calls.keys()];
  }

  /** Settles once every call tracked now has settled (or been given up on), however each settles. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.calls.values()]);
  }

  get size(): number {
    return this.calls.size;
  }

  private forget(notificationId: string, settled: Promise<unknown>): void {
    if (this.calls.get(notificationId) !== settled) return;
    this.calls.delete(notificationId);
    this.metrics.callsInFlight(this.calls.size);
  }
}
