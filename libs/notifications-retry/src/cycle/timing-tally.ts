import type { StatementTimings } from '../vocabulary/cycle-report';

/** Adds up how long one kind of statement took over a cycle. */
export class TimingTally {
  private count = 0;
  private totalMs = 0;
  private maxMs = 0;

  add(durationMs: number): void {
    this.count++;
    this.totalMs += durationMs;
    this.maxMs = Math.max(this.maxMs, durationMs);
  }

  timings(): StatementTimings {
    const round = (ms: number): number => Math.round(ms * 100) / 100;
    return { count: this.count, totalMs: round(this.totalMs), maxMs: round(this.maxMs) };
  }
}
