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
  /** The claims of due rows (the first one, and each further one in drain mode). */
  readonly claim: StatementTimings;
  /** The outcome writes, from the provider's answer to the commit, one per row. */
  readonly settle: StatementTimings;
}

export interface CycleCounts {
  /** Rows locked and given an outcome in this cycle. */
  readonly processed: number;
  readonly sent: number;
  /** Intermediate failures, rescheduled by backoff. */
  readonly retried: number;
  readonly terminal: number;
  /** Throttled or interrupted: rescheduled without using an attempt. */
  readonly deferred: number;
  /**
   * Candidates left as they were: held by another worker, no longer due when
   * we locked them, or their provider's circuit opened during the cycle.
   */
  readonly skipped: number;
  /** Units of work that failed to commit (database error); their rows stay due. */
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
