import { performance } from 'node:perf_hooks';

/**
 * The provider every system calls: succeeds after `latencyMs` (0 = an already
 * resolved promise, no timer). One instance, so all systems see the same
 * latency. Records how long the sleeps really took: under load a 20 ms timer
 * fires late, which lowers every system's ceiling below concurrency × 50 rows/s.
 */
export const fakeProvider = {
  latencyMs: 0,
  /** Per configured latency: total ms actually slept and the number of sleeps. */
  slept: new Map<number, { totalMs: number; count: number }>(),

  async send(notificationId: string): Promise<string> {
    const latencyMs = this.latencyMs;
    if (latencyMs > 0) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, latencyMs));
      const stats = this.slept.get(latencyMs) ?? { totalMs: 0, count: 0 };
      stats.totalMs += performance.now() - started;
      stats.count++;
      this.slept.set(latencyMs, stats);
    }
    return `bench-${notificationId}`;
  },

  /** Mean real duration of the sleeps for a configured latency; NaN if none ran. */
  meanSleptMs(latencyMs: number): number {
    const stats = this.slept.get(latencyMs);
    return stats ? stats.totalMs / stats.count : Number.NaN;
  },
};
