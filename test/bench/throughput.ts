import { Client } from 'pg';
import type { BenchOptions, SystemName } from './bench-options';
import { countDue, resetProcessedRows, vacuum } from './bench-database';
import { rowsPerSecond, type CellResult } from './cell-result';
import { fakeProvider } from './fake-provider';
import type { GraphileWorkerBench } from './graphile-worker-runner';
import { drainWithCycles, startOurCycleApp } from './our-cycle';
import type { PgBossBench } from './pg-boss-runner';
import { progress, rssMb } from './progress';
import { runRawLimit } from './raw-limit';

/** The specification's batch: ours runs with it, in drain mode and without. */
export const BATCH_SIZE = 200;

export interface ThroughputCell {
  readonly system: SystemName;
  readonly latencyMs: number;
  readonly concurrency: number;
  readonly rowsPerSec: number[];
  readonly processed: number[];
}

export interface ThroughputContext {
  readonly url: string;
  readonly admin: Client;
  readonly options: BenchOptions;
  readonly pgBoss: PgBossBench | null;
  readonly graphile: GraphileWorkerBench | null;
  /** Tables whose dead tuples are vacuumed away between cells. */
  readonly vacuumTables: readonly string[];
}

/**
 * Every (concurrency, latency) cell, `runs` times, the systems interleaved within
 * each run so that drift (autovacuum, WAL, page cache) spreads over all of them.
 * Between cells the processed rows are put back, so each cell starts from the
 * same backlog of `rows` due rows.
 */
export async function measureThroughput(context: ThroughputContext): Promise<ThroughputCell[]> {
  const { options } = context;
  const cells = new Map<string, ThroughputCell>();
  const capMs = options.seconds * 1000;
  for (const concurrency of options.concurrencies) {
    for (const latencyMs of options.latencies) {
      for (let run = 0; run < options.runs; run++) {
        for (const system of options.systems) {
          fakeProvider.latencyMs = latencyMs;
          const result = await runCell(context, system, concurrency, capMs);
          const key = `${system}|${latencyMs}|${concurrency}`;
          const cell = cells.get(key) ?? {
            system,
            latencyMs,
            concurrency,
            rowsPerSec: [],
            processed: [],
          };
          cell.rowsPerSec.push(rowsPerSecond(result));
          cell.processed.push(result.processed);
          cells.set(key, cell);
          progress(
            `${system.padEnd(15)} latency ${String(latencyMs).padStart(2)} ms, concurrency ${String(concurrency).padStart(2)}, run ${run + 1}/${options.runs}: ` +
              `${rowsPerSecond(result).toFixed(0).padStart(5)} rows/s (${result.processed} rows in ${(result.elapsedMs / 1000).toFixed(2)} s; RSS ${rssMb()})`,
          );
          await resetBacklog(context);
        }
      }
    }
  }
  return [...cells.values()];
}

async function runCell(
  context: ThroughputContext,
  system: SystemName,
  concurrency: number,
  capMs: number,
): Promise<CellResult> {
  const due = context.options.rows;
  switch (system) {
    case 'ours':
    case 'ours-no-drain': {
      const app = await startOurCycleApp({
        url: context.url,
        concurrency,
        batchSize: BATCH_SIZE,
        drain: system === 'ours',
      });
      try {
        return await drainWithCycles(app, capMs);
      } finally {
        await app.close();
      }
    }
    case 'raw':
      return runRawLimit(context.url, concurrency, capMs);
    case 'pg-boss':
      if (!context.pgBoss) throw new Error('pg-boss is not set up');
      return context.pgBoss.run(concurrency, capMs, due);
    case 'graphile-worker':
      if (!context.graphile) throw new Error('graphile-worker is not set up');
      return context.graphile.run(concurrency, capMs, due);
  }
}

/** Every row due again, the outbox empty, dead tuples gone. */
export async function resetBacklog(context: ThroughputContext): Promise<void> {
  await resetProcessedRows(context.admin);
  await vacuum(context.admin, context.vacuumTables);
  const due = await countDue(context.admin);
  if (due !== context.options.rows) {
    throw new Error(`after reset ${due} rows are due, expected ${context.options.rows}`);
  }
}
