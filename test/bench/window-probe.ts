import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';

/** The histogram's timer period, ms: each recorded delay includes it. */
const RESOLUTION_MS = 1;

/** What the process did over a cell's measured window, beside the rows. */
export interface WindowCost {
  /** User + system CPU of the whole process (the system, the fake provider, the harness), µs. */
  readonly cpuUs: number;
  /** How late a 1 ms timer ran, beyond its period: the event loop's lag, ms. */
  readonly eventLoopP50Ms: number;
  readonly eventLoopP99Ms: number;
}

/**
 * Process CPU and event-loop lag over the measured window only: the warm-up
 * (pools filling, first claims) and the stop (calls draining) would blur what a
 * steady stream of rows costs. Opened at the window's start, closed at its end.
 */
export class WindowProbe {
  private cpuAtStart: NodeJS.CpuUsage | null = null;
  private histogram: ELDHistogram | null = null;

  open(): void {
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    this.cpuAtStart = process.cpuUsage();
  }

  close(): WindowCost {
    if (!this.cpuAtStart || !this.histogram) {
      return { cpuUs: Number.NaN, eventLoopP50Ms: Number.NaN, eventLoopP99Ms: Number.NaN };
    }
    const cpu = process.cpuUsage(this.cpuAtStart);
    const histogram = this.histogram;
    histogram.disable();
    this.histogram = null;
    this.cpuAtStart = null;
    const lagMs = (p: number): number =>
      histogram.count > 0 ? Math.max(0, histogram.percentile(p) / 1e6 - RESOLUTION_MS) : Number.NaN;
    return { cpuUs: cpu.user + cpu.system, eventLoopP50Ms: lagMs(50), eventLoopP99Ms: lagMs(99) };
  }
}
