/** Something the runner did to an instance that can cut a unit of work between its provider call and its COMMIT. */
export interface CrashEvent {
  readonly kind: 'sigkill' | 'terminate' | 'sigterm';
  readonly instanceId: string;
  /** Database clock (clock_timestamp()), the clock the ledger and the audit use. */
  readonly at: Date;
  /** terminate: backends ended (all / not idle); sigterm: the exit and whether it was mid-cycle. */
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

/** An instance that exited without being told to. */
export interface UnexpectedExit {
  readonly instanceId: string;
  readonly code: number | null;
  readonly signal: string | null;
}
