import type { SystemName } from './bench-options';

/** One system set up for one cell: its pools open and warm, nothing claimed yet. */
export interface PreparedCell {
  /** Starts claiming and calling; resolves as soon as the system runs. */
  start(): Promise<void>;
  /**
   * Stops claiming, lets every call in flight finish and be written, and closes
   * every connection the system opened. True if the system ran out of due rows
   * before it was told to stop (the figure is then not a steady state).
   */
  stop(): Promise<{ ranDry: boolean }>;
}

/** A system the throughput cells run, on the connection budget. */
export interface BenchSystem {
  readonly name: SystemName | 'write-limit' | 'set-write-limit';
  /** The most provider calls it can have in flight: what the ideal is computed from. */
  readonly callsInFlight: number;
  /** Its pools' sizes added up: the budget. */
  readonly connections: number;
  /** How it is set up, for the report. */
  readonly description: string;
  /** Opens and warms its pools (not timed). */
  prepare(): Promise<PreparedCell>;
  /** Rows added to the backlog (it grows to the cell, throughput.ts): one queue job each, if it queues. */
  enqueueJobs(ids: readonly string[]): Promise<void>;
  /** After a cell whose processed rows are about to be put back: the queue's jobs for them too. */
  restoreJobs(processedIds: readonly string[]): Promise<void>;
  /** Everything it keeps across cells (none of it open during another system's cell). */
  close(): Promise<void>;
  /** What the run showed about it beyond the figures (a failed shutdown, say), for the report. */
  notes(): string[];
}
