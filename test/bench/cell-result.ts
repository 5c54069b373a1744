/** What one throughput cell measured. */
export interface CellResult {
  /** Rows committed as Sent (with their outbox event). */
  readonly processed: number;
  /** From starting the workers to the last unit of work finished. */
  readonly elapsedMs: number;
  readonly errors: number;
}

export function rowsPerSecond(result: CellResult): number {
  return result.elapsedMs > 0 ? (result.processed * 1000) / result.elapsedMs : 0;
}
