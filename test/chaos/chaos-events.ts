/** Something the runner did to an instance that can cut a unit of work between its provider call and its COMMIT. */
export interface CrashEvent {
  readonly kind: 'sigkill' | 'terminate' | 'group-commit-kill' | 'sigterm' | 'sigstop';
  readonly instanceId: string;
  /** Database clock (clock_timestamp()), the clock the ledger and the audit use. */
  readonly at: Date;
  /** terminate: backends ended (all / not idle); group-commit-kill: settle statements' backends ended; sigterm: the exit and whether it was mid-cycle; sigstop: the lease. */
  readonly detail: string;
}

/** A SIGTERM the runner sent to a working instance, and how the process ended. */
export interface SigtermRecord {
  readonly instanceId: string;
  readonly midCycle: boolean;
  readonly code: number | null;
  readonly signal: string | null;
  readonly exitMs: number;
  /** The run's final stop of every instance, as opposed to a chaos SIGTERM. */
  readonly final: boolean;
}

/** A SIGSTOP of the lease owner for longer than its lease, then SIGCONT: a live former owner. */
export interface SigstopRecord {
  readonly instanceId: string;
  /** The lease it held when stopped. */
  readonly fencingToken: number;
  /** Database clock. */
  readonly stoppedAt: Date;
  readonly resumedAt: Date;
  readonly stoppedMs: number;
  /** The token of the lease when it was resumed: higher if another instance took over meanwhile. */
  readonly tokenAtResume: number | null;
  /** `lease-lost` lines it logged after SIGCONT: writes its fence turned away. */
  readonly leaseLostAfterResume: number;
}

/** An instance that exited without being told to. */
export interface UnexpectedExit {
  readonly instanceId: string;
  readonly code: number | null;
  readonly signal: string | null;
  /** The last error line on its stderr, if any (an unhandled 'error' event, …). */
  readonly lastError?: string;
}
