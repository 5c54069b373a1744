import { performance } from 'node:perf_hooks';

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
  /** Per configured latency: total ms actually slept and the number of sleeps. */
  slept: new Map<number, { totalMs: number; count: number }>(),

  startRecording(): void {
    this.returned = [];
    this.maxInFlight = this.inFlight;
  },

  async send(notificationId: string): Promise<string> {
    const latencyMs = this.latencyMs;
    this.inFlight++;
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
    try {
      if (latencyMs > 0) {
        const started = performance.now();
        await new Promise((resolve) => setTimeout(resolve, latencyMs));
        const stats = this.slept.get(latencyMs) ?? { totalMs: 0, count: 0 };
        stats.totalMs += performance.now() - started;
        stats.count++;
        this.slept.set(latencyMs, stats);
      }
      this.returned.push(performance.now());
      return `bench-${notificationId}`;
    } finally {
      this.inFlight--;
    }
  },

  /** Mean real duration of the sleeps for a configured latency; NaN if none ran. */
  meanSleptMs(latencyMs: number): number {
    const stats = this.slept.get(latencyMs);
    return stats ? stats.totalMs / stats.count : Number.NaN;
  },
};
