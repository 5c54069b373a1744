import type { RecentCycle } from '@pin/notifications-retry';

/** uPlot's columns for the cycles chart: x in Unix seconds, oldest first, one point per cycle. */
export interface CycleSeries {
  readonly at: number[];
  readonly sent: number[];
  readonly retried: number[];
  readonly terminal: number[];
}

export function cycleSeries(cycles: readonly RecentCycle[]): CycleSeries {
  const ordered = [...cycles].sort(
    (a, b) => new Date(a.startedAt).getTime() - new Date(b.startedAt).getTime(),
  );
  return {
    at: ordered.map((c) => Math.floor(new Date(c.startedAt).getTime() / 1000)),
    sent: ordered.map((c) => c.sent),
    retried: ordered.map((c) => c.retried),
    terminal: ordered.map((c) => c.terminal),
  };
}
