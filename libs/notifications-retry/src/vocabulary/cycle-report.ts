/** Why a cycle did not run at all. */
export type CycleSkipReason = 'lease-held' | 'already-running' | 'cancelled';

/** Why a cycle that ran stopped claiming rows. */
export type CycleStopReason =
  'batch-full' | 'no-more-due' | 'deadline' | 'cancelled' | 'lease-lost';

/** Why a channel's due rows were left out of the claim. */
export type ChannelExclusionReason =
  | 'disabled'
  | 'not-configured'
  | 'no-provider-adapter'
  /** The adapter exists but its feature flag is off. */
  | 'provider-disabled'
  /** An operator paused it (ChannelPauses): its rows wait, untouched, until resumed. */
  | 'paused'
  | 'circuit-open'
  | 'timeout-exceeds-lease';

export interface ExcludedChannel {
  readonly channel: string;
  readonly reason: ChannelExclusionReason;
  /** Due rows left waiting, untouched. */
  readonly dueRows: number;
}

/** A channel left out for a configuration reason: a mistake to fix, whether rows wait or not. */
export interface MisconfiguredChannel {
  readonly channel: string;
  readonly reason: ChannelExclusionReason;
}

/** How long one kind of statement took over a cycle. */
export interface StatementTimings {
  readonly count: number;
  readonly totalMs: number;
  readonly maxMs: number;
}

export interface CycleTimings {
  /** The claim statements. */
  readonly claim: StatementTimings;
  /** Per written row, from its outcome being known to its write committed (group commit included). */
  readonly settle: StatementTimings;
}

export interface CycleCounts {
  /** Rows given an outcome (written) in this cycle. */
  readonly processed: number;
  readonly sent: number;
  /** Intermediate failures, rescheduled by backoff. */
  readonly retried: number;
  readonly terminal: number;
  /** Throttled: rescheduled without using an attempt. */
  readonly deferred: number;
  /**
   * Claimed rows handed back without an outcome: never called when the cycle
   * stopped, their provider's circuit opened, or their call was cut (shutdown,
   * lost lease). Status, attempts and due time are as they were.
   */
  readonly skipped: number;
  /** Outcome writes whose claim token no longer matched: nothing was written for them. */
  readonly claimsLost: number;
  /**
   * Outcomes that could not be written as decided: held instead
   * (`outcome_not_recorded`, attempt counted) or, when even that failed, left
   * to their claim's lapse.
   */
  readonly errors: number;
}

interface CycleReportBase {
  readonly runId: string;
  readonly correlationId: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly durationMs: number;
}

export interface CompletedCycleReport extends CycleReportBase {
  readonly status: 'completed';
  readonly stopReason: CycleStopReason;
  readonly fencingToken: number;
  readonly counts: CycleCounts;
  readonly excludedChannels: readonly ExcludedChannel[];
  /** Channels left out for a configuration reason (see README), sorted by key. */
  readonly misconfiguredChannels: readonly MisconfiguredChannel[];
  readonly timings: CycleTimings;
  /** Largest delay between a row's due time and its processing, in ms. */
  readonly maxLagMs: number;
}

export interface SkippedCycleReport extends CycleReportBase {
  readonly status: 'skipped';
  readonly skipReason: CycleSkipReason;
}

export type CycleReport = CompletedCycleReport | SkippedCycleReport;
