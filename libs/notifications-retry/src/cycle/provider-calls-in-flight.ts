import { Injectable } from '@nestjs/common';

/**
 * Every provider call this instance has started and that has not settled yet,
 * by notification id, across cycles. A call written off at its timeout and
 * settle margin may still be running (an adapter that ignores its signal); the
 * cycle leaves its notification alone until it settles, so one instance never
 * has two calls in flight for one notification.
 */
@Injectable()
export class ProviderCallsInFlight {
  private readonly calls = new Map<string, Promise<unknown>>();

  /** Records a call until `settled` settles, however it settles. */
  track(notificationId: string, settled: Promise<unknown>): void {
    this.calls.set(notificationId, settled);
    const forget = (): void => {
      if (this.calls.get(notificationId) === settled) this.calls.delete(notificationId);
    };
    settled.then(forget, forget);
  }

  has(notificationId: string): boolean {
    return this.calls.has(notificationId);
  }

  /** The notifications with a call in flight, for the claim to leave out. */
  notificationIds(): string[] {
    return [...this.calls.keys()];
  }

  get size(): number {
    return this.calls.size;
  }
}
