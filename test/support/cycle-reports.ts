import type { CompletedCycleReport, CycleReport } from '@pin/notifications-retry';

/** The report of a cycle that ran; fails the test with the reason when it was skipped. */
export function completed(report: CycleReport): CompletedCycleReport {
  if (report.status !== 'completed') throw new Error(`cycle was skipped: ${report.skipReason}`);
  return report;
}
