import { Injectable } from '@nestjs/common';

/**
 * Spaces a rate-limited channel's provider calls at least 1000 / rate ms apart
 * (plus a millisecond for timer granularity), so no one-second window ever
 * holds more than `rate` calls; a token bucket would allow a burst of twice
 * that at the start of a cycle. Kept across cycles: a cycle that starts right
 * after a busy one gets no fresh burst.
 *
 * Two checkpoints: the dispatch queue plans with `waitMs`/`dispatched`, so a
 * limited channel never parks claimed rows (and their running claims) in the
 * worker's call slots; `awaitCallSlot` then holds each call to its turn,
 * measured from when the previous call really started, because the circuit
 * breaker and the scheduling between dispatch and call take a varying few
 * milliseconds. Times are monotonic milliseconds (performance.now()). One per
 * module: the dispatch queue and the provider caller share it.
 */
@Injectable()
export class ChannelPacer {
  private readonly nextDispatchAt = new Map<string, number>();
  /** Per channel, resolves with the moment the latest call was let through. */
  private readonly lastCall = new Map<string, Promise<number>>();

  /** How long the channel must wait before its next row may be dispatched; 0 = now. */
  waitMs(channel: string, ratePerSec: number | null, nowMs: number): number {
    if (ratePerSec === null) return 0;
    return Math.max(0, (this.nextDispatchAt.get(channel) ?? 0) - nowMs);
  }

  /**
   * When the channel's row `ahead` places behind the next one (0: the next)
   * may be dispatched, as planned now: the claim asks it so that it claims
   * only what can start soon, each claim long enough to cover its wait.
   */
  slotAt(channel: string, ratePerSec: number, nowMs: number, ahead: number): number {
    return Math.max(nowMs, this.nextDispatchAt.get(channel) ?? 0) + ahead * spacingMs(ratePerSec);
  }

  /** Records a row dispatched now. */
  dispatched(channel: string, ratePerSec: number | null, nowMs: number): void {
    if (ratePerSec === null) return;
    const next = Math.max(nowMs, this.nextDispatchAt.get(channel) ?? 0) + spacingMs(ratePerSec);
    this.nextDispatchAt.set(channel, next);
  }

  /** Resolves when the channel's next provider call may start; calls are let through one at a time. */
  async awaitCallSlot(channel: string, ratePerSec: number | null): Promise<void> {
    if (ratePerSec === null) return;
    const previous = this.lastCall.get(channel) ?? Promise.resolve(Number.NEGATIVE_INFINITY);
    const turn = previous.then(async (lastAt) => {
      const waitMs = lastAt + spacingMs(ratePerSec) - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(waitMs)));
      return performance.now();
    });
    this.lastCall.set(channel, turn);
    await turn;
  }
}

/** The planned time between two calls of a channel limited to `ratePerSec`. */
export function spacingMs(ratePerSec: number): number {
  return 1000 / ratePerSec + 1;
}
