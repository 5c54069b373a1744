import type { MisconfiguredChannel } from '../cycle/cycle-report';

/** How the worker stands, for /health and operators. No personal data. */
export interface RetryWorkerHealth {
  readonly healthy: boolean;
  readonly enabled: boolean;
  /** Last completed cycle, or last tick rightly skipped because another instance holds the lease. */
  readonly lastCycleAt: Date | null;
  readonly lastCycleStatus: 'completed' | 'lease-held' | null;
  /** How long without a cycle counts as stale: the schedule's interval × the configured multiple. */
  readonly staleAfterMs: number;
  /** Failed rows awaiting a retry, as of the last completed cycle. */
  readonly failedBacklog: number | null;
  /** Channels the last completed cycle left out for a configuration reason; not a reason to be unhealthy. */
  readonly misconfiguredChannels: readonly MisconfiguredChannel[];
  /** Channels an operator paused, as of the last cycle's read; their rows wait. */
  readonly pausedChannels: readonly string[];
  readonly reason?: string;
}
