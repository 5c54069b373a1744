import type { MisconfiguredChannel } from '../vocabulary/cycle-report';
import type { CompletedCycleReading } from '../locking/last-completed-cycle-read';

/** How the worker stands, for /health and operators. No personal data. */
export interface RetryWorkerHealth {
  readonly healthy: boolean;
  readonly enabled: boolean;
  /**
   * The last cycle any instance completed, by the database clock (the lease
   * row records it); null when none is recorded, the lock keeps no record, or
   * the read failed (`reason` says which).
   */
  readonly lastCompletedAt: Date | null;
  /** The instance whose cycle that was. */
  readonly lastCompletedBy: string | null;
  /** This instance's last tick: a cycle it completed, or one skipped because the lease was held. */
  readonly lastCycleAt: Date | null;
  readonly lastCycleStatus: 'completed' | 'lease-held' | null;
  /** How long without a cycle counts as stale: the schedule's interval × the configured multiple. */
  readonly staleAfterMs: number;
  /** Failed rows awaiting a retry, as of this instance's last completed cycle. */
  readonly failedBacklog: number | null;
  /** Channels the last completed cycle left out for a configuration reason; not a reason to be unhealthy. */
  readonly misconfiguredChannels: readonly MisconfiguredChannel[];
  /** Channels an operator paused, as of the last cycle's read; their rows wait. */
  readonly pausedChannels: readonly string[];
  readonly reason?: string;
}

/** What this instance knows of itself, next to what the lock recorded. */
export interface RetryWorkerHealthInput {
  readonly enabled: boolean;
  readonly staleAfterMs: number;
  /** Monotonic time since this instance started. */
  readonly uptimeMs: number;
  readonly completed: CompletedCycleReading;
  readonly lastCycle: { readonly at: Date; readonly status: 'completed' | 'lease-held' } | null;
  /** Wall-clock now, only to judge `lastCycle` when the lock keeps no record. */
  readonly now: Date;
  readonly failedBacklog: number | null;
  readonly misconfiguredChannels: readonly MisconfiguredChannel[];
  readonly pausedChannels: readonly string[];
}

/**
 * The verdict (DESIGN §5): healthy while **some** instance completed a cycle
 * within `staleAfterMs`, by the lock's clock, whatever this instance's own
 * ticks say: a tick skipped for a held lease is on time only while the lease's
 * owner completes cycles, and a lease nobody can take (its row locked by a
 * stuck session, an owner that never completes) turns every instance down. A
 * record that cannot be read (the database refuses connections, the read
 * times out) is down too, with the error as the reason.
 *
 * An instance younger than `staleAfterMs` is healthy meanwhile, whatever the
 * record says (unless the record cannot be read): after a stop of the whole
 * fleet the record is old, and a fresh instance needs a tick to complete a
 * cycle; down at once, a liveness probe would restart it before it could.
 *
 * With `enabled: false` (no schedule here; an API-only replica, the ops CLI)
 * the instance is healthy whatever the record says: restarting it or taking it
 * out of service would not make anyone cycle. The record and its staleness
 * still show, in the details and the reason.
 *
 * A lock that keeps no record: this instance's own ticks decide, a tick skipped
 * for another owner's lease counting as on time (a stalled owner then goes
 * unnoticed here, which only a lock that records completed cycles can tell).
 */
export function judgeRetryWorkerHealth(input: RetryWorkerHealthInput): RetryWorkerHealth {
  const { completed, staleAfterMs } = input;
  const record = completed.kind === 'recorded' ? completed.record : null;
  const base = {
    enabled: input.enabled,
    lastCompletedAt: record?.at ?? null,
    lastCompletedBy: record?.by ?? null,
    lastCycleAt: input.lastCycle?.at ?? null,
    lastCycleStatus: input.lastCycle?.status ?? null,
    staleAfterMs,
    failedBacklog: input.failedBacklog,
    misconfiguredChannels: input.misconfiguredChannels,
    pausedChannels: input.pausedChannels,
  };
  const problem = staleness(input);
  if (!input.enabled) {
    const disabled = 'worker disabled on this instance';
    return { ...base, healthy: true, reason: problem ? `${disabled}; ${problem}` : disabled };
  }
  if (problem === null) return { ...base, healthy: true };
  // The allowance is for the first cycle, which a database out of reach would not let happen anyway.
  if (input.completed.kind !== 'failed' && input.uptimeMs <= staleAfterMs)
    return { ...base, healthy: true };
  return { ...base, healthy: false, reason: problem };
}

/** Why no recent completed cycle can be shown, or null when one can. */
function staleness(input: RetryWorkerHealthInput): string | null {
  const { completed, staleAfterMs } = input;
  switch (completed.kind) {
    case 'failed':
      return `cannot read the last completed cycle from the database: ${completed.error}`;
    case 'not-kept': {
      const since = input.lastCycle?.at.getTime();
      if (since !== undefined && input.now.getTime() - since <= staleAfterMs) return null;
      return `no cycle for more than ${staleAfterMs} ms`;
    }
    case 'recorded': {
      const { at, by, now } = completed.record;
      if (at !== null && now.getTime() - at.getTime() <= staleAfterMs) return null;
      const last = at === null ? 'none recorded' : `last ${at.toISOString()} by ${by ?? 'unknown'}`;
      return `no instance has completed a cycle for more than ${staleAfterMs} ms (${last})`;
    }
  }
}
