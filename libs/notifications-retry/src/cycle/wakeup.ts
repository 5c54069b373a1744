/**
 * What the cycle's loop sleeps on: a finished row, a timer, or the stop
 * signal, whichever comes first. One waiter, one promise per sleep, however
 * many calls are in flight (a race over thousands of promises per turn would
 * cost more than the work).
 */
export class Wakeup {
  private waiter: (() => void) | null = null;
  private pending = false;

  constructor(private readonly stop: AbortSignal) {}

  /** Wakes the sleeper, or the next sleep at once if nobody sleeps now. */
  notify(): void {
    this.pending = true;
    this.waiter?.();
  }

  /** Sleeps up to `ms` (Infinity: until notified or stopped). */
  wait(ms: number): Promise<void> {
    if (this.pending || this.stop.aborted || ms <= 0) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(() => done(), ms) : undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.stop.removeEventListener('abort', done);
        this.waiter = null;
        this.pending = false;
        resolve();
      };
      this.stop.addEventListener('abort', done, { once: true });
      this.waiter = done;
    });
  }
}
