import { performance } from 'node:perf_hooks';
import {
  Logger,
  makeWorkerUtils,
  run,
  runMigrations,
  type JobHelpers,
  type LogLevel,
  type WorkerUtils,
} from 'graphile-worker';
import { Pool } from 'pg';
import type { CellResult } from './cell-result';
import { POOL_HEADROOM } from './our-cycle';
import { sleep } from './progress';
import { warmPool } from './warm-pool';
import { processById } from './unit-of-work';

const TASK = 'notification_retry';
const INSERT_CHUNK = 5_000;

/** graphile-worker's own log lines are dropped; errors are kept for the report. */
const errors: string[] = [];
const silentLogger = new Logger(() => (level, message) => {
  // LogLevel is a const enum: compared by value, so the harness also runs transpile-only.
  if (level === ('error' as LogLevel) && errors.length < 5) errors.push(message);
});

/**
 * graphile-worker 0.17 doing the same job, with its defaults (no local queue,
 * no batched completion): `concurrency` workers, each fetches one job, runs
 * the unit of work by id on a client from the runner's pool, completes it.
 */
export class GraphileWorkerBench {
  private constructor(
    private readonly utils: WorkerUtils,
    private readonly url: string,
  ) {}

  static async start(url: string): Promise<GraphileWorkerBench> {
    await runMigrations({ connectionString: url, logger: silentLogger });
    const utils = await makeWorkerUtils({ connectionString: url, logger: silentLogger });
    return new GraphileWorkerBench(utils, url);
  }

  async enqueue(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
      await this.utils.addJobs(
        ids.slice(i, i + INSERT_CHUNK).map((id) => ({ identifier: TASK, payload: { id } })),
      );
    }
  }

  async run(concurrency: number, capMs: number, due: number): Promise<CellResult> {
    const pgPool = new Pool({ connectionString: this.url, max: concurrency + POOL_HEADROOM });
    pgPool.on('error', (error) => errors.push(`pool: ${error.message}`));
    pgPool.on('connect', (client) =>
      client.on('error', (error) => errors.push(`client: ${error.message}`)),
    );
    const processedRows: string[] = [];
    let lastFinished = 0;
    const task = async (payload: unknown, helpers: JobHelpers): Promise<void> => {
      const { id } = payload as { id: string };
      const done = await helpers.withPgClient((client) => processById(client, id));
      if (!done) throw new Error(`notification ${id} was not due`);
      processedRows.push(id);
      lastFinished = performance.now();
    };
    try {
      await warmPool(pgPool, concurrency + 1);
      const started = performance.now();
      const runner = await run({
        pgPool,
        concurrency,
        noHandleSignals: true,
        pollInterval: 2_000,
        logger: silentLogger,
        taskList: { [TASK]: task },
      });
      const deadline = started + capMs;
      while (performance.now() < deadline && processedRows.length < due) await sleep(2);
      // Stops fetching; the jobs in flight finish first.
      await runner.stop();
      await runner.promise;
      if (errors.length > 0) throw new Error(`graphile-worker errors: ${errors.join('; ')}`);
      const elapsedMs = (lastFinished || performance.now()) - started;
      // Completed jobs are deleted by graphile-worker: add them back for the next cell.
      await this.enqueue(processedRows);
      return { processed: processedRows.length, errors: 0, elapsedMs };
    } finally {
      await pgPool.end();
    }
  }

  async stop(): Promise<void> {
    await this.utils.release();
  }
}
