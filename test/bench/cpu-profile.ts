import type { Profiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';

/**
 * V8's sampling profiler on this very process, through the inspector protocol:
 * the cell runs in-process, so its samples are the system's own stacks (and the
 * fake provider's, and the harness's few). Only one window is profiled: the
 * profiler's cost would otherwise be in every figure.
 */
export class CpuProfiler {
  private readonly session = new Session();

  static async open(samplingIntervalUs: number): Promise<CpuProfiler> {
    const profiler = new CpuProfiler();
    profiler.session.connect();
    await profiler.session.post('Profiler.enable');
    // Set before start: V8 keeps the interval a profile started with.
    await profiler.session.post('Profiler.setSamplingInterval', { interval: samplingIntervalUs });
    return profiler;
  }

  async start(): Promise<void> {
    await this.session.post('Profiler.start');
  }

  async stop(): Promise<Profiler.Profile> {
    const { profile } = await this.session.post('Profiler.stop');
    return profile;
  }

  async close(): Promise<void> {
    await this.session.post('Profiler.disable');
    this.session.disconnect();
  }
}
