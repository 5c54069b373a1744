import { performance } from 'node:perf_hooks';

/** How long a cell's sleeps really took, added up. */
export interface SleptTally {
  readonly totalMs: number;
  readonly count: number;
}

/**
 * The provider every system calls: succeeds after `latencyMs` (0 = an already
 * resolved promise, no timer). One instance, so all systems see the same
 * latency. Records when each call returned (the cell's rate is the slope of
 * those times) and how long the sleeps really took: under load a timer fires
 * late, which lowers every system's ceiling below calls in flight ÷ latency.
 */
export const fakeProvider = {
  latencyMs: 0,
  /** `performance.now()` at the return of each call since `startRecording()`. */
  returned: [] as number[],
  /** Calls started and not returned yet, and the most seen at once since `startRecording()`. */
  inFlight: 0,
  maxInFlight: 0,
  /**
   * The sleeps since `startRecording()`: per cell, because how late a timer fires depends on
   * how busy the system under test keeps the event loop.
   */
  slept: { totalMs: 0, count: 0 },

  startRecording(): void {
    this.returned = [];
    this.maxInFlight = this.inFlight;
    this.slept = { totalMs: 0, count: 0 };
  },

  async send(notificationId: string): Promise<string> {
    const latencyMs = this.latencyMs;
    this.inFlight++;
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
    try {
      if (latencyMs > 0) {
        const started = performance.now();
        await new Promise((resolve) => setTimeout(resolve, latencyMs));
        this.slept.totalMs += performance.now() - started;
        this.slept.count++;
      }
      this.returned.push(performance.now());
      return `bench-${notificationId}`;
    } finally {
      this.inFlight--;
    }
  },
};

/** Mean sleep ÷ asked latency − 1, in %: how late the timers fired; NaN at 0 ms or with no sleep. */
export function timerLatenessPercent(slept: SleptTally, latencyMs: number): number {
  if (latencyMs <= 0 || slept.count === 0) return Number.NaN;
  return (slept.totalMs / slept.count / latencyMs - 1) * 100;
}
