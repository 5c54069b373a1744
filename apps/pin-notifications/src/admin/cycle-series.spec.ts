import type { RecentCycle } from '@pin/notifications-retry';
import { cycleSeries } from './cycle-series';

const cycle = (
  startedAt: string,
  sent: number,
  retried: number,
  terminal: number,
): RecentCycle => ({
  runId: startedAt,
  instanceId: 'a',
  startedAt: new Date(startedAt),
  finishedAt: new Date(startedAt),
  durationMs: 10,
  stopReason: 'drained',
  processed: sent + retried + terminal,
  sent,
  retried,
  terminal,
  deferred: 0,
  skipped: 0,
  claimsLost: 0,
  errors: 0,
});

describe('cycleSeries', () => {
  it('turns the newest-first cycles into uPlot columns, oldest first, x in Unix seconds', () => {
    expect(
      cycleSeries([cycle('2026-01-01T00:02:00Z', 1, 0, 2), cycle('2026-01-01T00:01:00Z', 5, 3, 0)]),
    ).toEqual({
      at: [1767225660, 1767225720],
      sent: [5, 1],
      retried: [3, 0],
      terminal: [0, 2],
    });
  });
});
