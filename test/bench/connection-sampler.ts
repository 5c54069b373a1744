import { performance } from 'node:perf_hooks';
import { Client } from 'pg';

/** One look at `pg_stat_activity`: the bench database's client backends, the harness's own left out. */
export interface ConnectionSample {
  readonly at: number;
  /** Every connection open to the database. */
  readonly open: number;
  /** `active` or `idle in transaction` (aborted included): connections doing or holding work. */
  readonly inUse: number;
  readonly idleInTransaction: number;
}

/** What a cell's samples say, over its measured window. */
export interface ConnectionFigures {
  readonly samples: number;
  readonly inUseMean: number;
  readonly inUseMax: number;
  readonly idleInTransactionMean: number;
  readonly idleInTransactionMax: number;
  readonly openMax: number;
}

/** About every 100 ms: often enough to see a 1 s wave, rarely enough to cost nothing measurable. */
const INTERVAL_MS = 100;

/**
 * Samples the connections to one database on a connection of its own, which
 * the query leaves out along with any other backend pid the harness names
 * (its admin connection). One statement per sample, back to back with a sleep.
 */
export class ConnectionSampler {
  private samples: ConnectionSample[] = [];
  private running: Promise<void> | null = null;
  private stopping = false;

  private constructor(
    private readonly client: Client,
    private readonly excludedPids: readonly number[],
  ) {}

  static async open(url: string, excludedPids: readonly number[]): Promise<ConnectionSampler> {
    const client = new Client({ connectionString: url, application_name: 'bench-sampler' });
    await client.connect();
    return new ConnectionSampler(client, excludedPids);
  }

  start(): void {
    if (this.running) throw new Error('the sampler is already running');
    this.samples = [];
    this.stopping = false;
    this.running = this.loop();
  }

  /** Stops sampling; the samples taken so far. */
  async stop(): Promise<ConnectionSample[]> {
    this.stopping = true;
    await this.running;
    this.running = null;
    return this.samples;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.client.end();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const started = performance.now();
      const { rows } = await this.client.query<{
        open: number;
        in_use: number;
        idle_in_transaction: number;
      }>(
        `SELECT count(*)::int AS open,
                count(*) FILTER (WHERE state IN ('active', 'idle in transaction', 'idle in transaction (aborted)'))::int AS in_use,
                count(*) FILTER (WHERE state IN ('idle in transaction', 'idle in transaction (aborted)'))::int AS idle_in_transaction
           FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend'
            AND pid <> pg_backend_pid() AND NOT (pid = ANY($1::int[]))`,
        [this.excludedPids],
      );
      this.samples.push({
        at: started,
        open: rows[0].open,
        inUse: rows[0].in_use,
        idleInTransaction: rows[0].idle_in_transaction,
      });
      const wait = INTERVAL_MS - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Means and maxima of the samples taken in [fromMs, toMs). */
export function connectionFigures(
  samples: readonly ConnectionSample[],
  fromMs: number,
  toMs: number,
): ConnectionFigures {
  const inWindow = samples.filter((s) => s.at >= fromMs && s.at < toMs);
  const mean = (pick: (s: ConnectionSample) => number): number =>
    inWindow.length > 0
      ? inWindow.reduce((sum, s) => sum + pick(s), 0) / inWindow.length
      : Number.NaN;
  const max = (pick: (s: ConnectionSample) => number): number =>
    inWindow.length > 0 ? Math.max(...inWindow.map(pick)) : Number.NaN;
  return {
    samples: inWindow.length,
    inUseMean: mean((s) => s.inUse),
    inUseMax: max((s) => s.inUse),
    idleInTransactionMean: mean((s) => s.idleInTransaction),
    idleInTransactionMax: max((s) => s.idleInTransaction),
    openMax: max((s) => s.open),
  };
}
