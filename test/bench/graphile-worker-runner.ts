import {
  Logger,
  makeWorkerUtils,
  run,
  runMigrations,
  type JobHelpers,
  type LogLevel,
  type Runner,
  type WorkerUtils,
} from 'graphile-worker';
import { Pool } from 'pg';
import type { BenchSystem, PreparedCell } from './bench-system';
import { sendNotificationJob } from './peer-job';
import { warmPool } from './warm-pool';

const TASK = 'send_notification';
const INSERT_CHUNK = 5_000;

/**
 * graphile-worker 0.18.0 cannot release a local queue that still holds jobs
 * (mode WAITING: `setModeReleased` marks it released before `returnJobs`
 * backgrounds the return, which then throws). Under a backlog that is every
 * shutdown: the runner's stop fails with this, and the jobs it had fetched stay
 * locked until graphile-worker's own lock timeout (4 h). The harness unlocks
 * them with `forceUnlockWorkers` (the documented recovery for a worker that did
 * not exit cleanly) between cells, after the timing.
 */
const LOCAL_QUEUE_RELEASE_BUG = 'Cannot background something when the queue is already released';

export interface GraphileTuning {
  /** `concurrentJobs`. */
  readonly concurrency: number;
  /** `localQueue.size`; -1 for none (each worker fetches its own job). */
  readonly localQueue: number;
  /** `completeJobBatchDelay` (and `failJobBatchDelay`) in ms; -1 completes each job on its own. */
  readonly completeBatchDelayMs: number;
}

/** graphile-worker's own log lines are dropped; errors are kept for the report. */
function silentLogger(errors: string[]): Logger {
  return new Logger(() => (level, message) => {
    // LogLevel is a const enum: compared by value, so the harness also runs transpile-only.
    if (level === ('error' as LogLevel) && errors.length < 5) errors.push(message);
  });
}

/**
 * graphile-worker 0.18 as its documentation has a team run it: one job per
 * notification, `run()` with a task list, `concurrentJobs` and the batching
 * options of its performance guide (a local queue, batched completions). The
 * task calls the provider with no transaction open, then writes the row and its
 * outbox event in one short transaction, both through `helpers.withPgClient`:
 * one `pg.Pool` of the whole budget for graphile-worker (fetches, completions,
 * its LISTEN connection) and the task's own statements.
 */
export class GraphileWorkerSystem implements BenchSystem {
  readonly name = 'graphile-worker' as const;
  readonly callsInFlight: number;
  readonly connections: number;
  readonly description: string;
  /** Shutdowns that hit LOCAL_QUEUE_RELEASE_BUG, for the report. */
  shutdownsLeavingJobsLocked = 0;

  private constructor(
    private readonly url: string,
    budget: number,
    private readonly tuning: GraphileTuning,
  ) {
    this.callsInFlight = tuning.concurrency;
    this.connections = budget;
    const localQueue =
      tuning.localQueue > 0 ? `\`localQueue: { size: ${tuning.localQueue} }\`` : 'no local queue';
    const batching =
      tuning.completeBatchDelayMs >= 0
        ? `\`completeJobBatchDelay\` / \`failJobBatchDelay: ${tuning.completeBatchDelayMs}\``
        : 'completions one by one';
    this.description = `\`run()\` with \`concurrentJobs: ${tuning.concurrency}\`, ${localQueue}, ${batching}, on one \`pg.Pool\` of ${budget} (\`pgPool\`) that the task uses through \`withPgClient\``;
  }

  /** Installs graphile-worker's schema and enqueues one job per notification. */
  static async install(
    url: string,
    budget: number,
    tuning: GraphileTuning,
    ids: readonly string[],
  ): Promise<GraphileWorkerSystem> {
    const errors: string[] = [];
    await runMigrations({ connectionString: url, logger: silentLogger(errors) });
    const system = new GraphileWorkerSystem(url, budget, tuning);
    await system.withUtils((utils) => enqueue(utils, ids));
    return system;
  }

  async prepare(): Promise<PreparedCell> {
    const errors: string[] = [];
    const pgPool = new Pool({ connectionString: this.url, max: this.connections });
    pgPool.on('error', (error) => errors.push(`pool: ${error.message}`));
    pgPool.on('connect', (client) =>
      client.on('error', (error) => errors.push(`client: ${error.message}`)),
    );
    await warmPool(pgPool, this.connections);
    let runner: Runner | null = null;
    const task = async (payload: unknown, helpers: JobHelpers): Promise<void> => {
      const { id } = payload as { id: string };
      const sent = await sendNotificationJob(
        (work) => helpers.withPgClient(work),
        id,
        String(helpers.job.id),
      );
      if (!sent) throw new Error(`notification ${id} was already sent`);
    };
    const { concurrency, localQueue, completeBatchDelayMs } = this.tuning;
    return {
      start: async () => {
        runner = await run({
          pgPool,
          noHandleSignals: true,
          logger: silentLogger(errors),
          taskList: { [TASK]: task },
          preset: {
            worker: {
              concurrentJobs: concurrency,
              pollInterval: 2_000,
              ...(localQueue > 0 ? { localQueue: { size: localQueue } } : {}),
              completeJobBatchDelay: completeBatchDelayMs,
              failJobBatchDelay: completeBatchDelayMs,
            },
          },
        });
      },
      stop: async () => {
        if (errors.length > 0) throw new Error(`graphile-worker errors: ${errors.join('; ')}`);
        const failures: string[] = [];
        try {
          // Stops fetching, waits for the jobs in flight, returns the local queue's jobs.
          await runner?.stop().catch((error: unknown) => failures.push(String(error)));
          await runner?.promise.catch((error: unknown) => failures.push(String(error)));
        } finally {
          await pgPool.end();
        }
        failures.push(...errors);
        if (failures.length > 0) {
          if (!failures.some((f) => f.includes(LOCAL_QUEUE_RELEASE_BUG))) {
            throw new Error(`graphile-worker errors: ${failures.join('; ')}`);
          }
          this.shutdownsLeavingJobsLocked++;
        }
        return { ranDry: false };
      },
    };
  }

  async enqueueJobs(ids: readonly string[]): Promise<void> {
    await this.withUtils((utils) => enqueue(utils, ids));
  }

  /** Completed jobs are deleted by graphile-worker: one new job per row put back. */
  async restoreJobs(processedIds: readonly string[]): Promise<void> {
    await this.withUtils(async (utils) => {
      const lockedBy = async (): Promise<string[]> =>
        (
          await utils.withPgClient((client) =>
            client.query<{ locked_by: string }>(
              `SELECT DISTINCT locked_by FROM graphile_worker.jobs WHERE locked_by IS NOT NULL`,
            ),
          )
        ).rows.map((row) => row.locked_by);
      const stuck = await lockedBy();
      if (stuck.length > 0) {
        if (this.shutdownsLeavingJobsLocked === 0) {
          throw new Error(`graphile-worker left jobs locked by ${stuck.join(', ')}`);
        }
        await utils.forceUnlockWorkers(stuck);
        if ((await lockedBy()).length > 0) throw new Error('graphile-worker jobs still locked');
      }
      await enqueue(utils, processedIds);
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  notes(): string[] {
    return this.shutdownsLeavingJobsLocked > 0
      ? [
          `${this.shutdownsLeavingJobsLocked} of its shutdowns failed with "${LOCAL_QUEUE_RELEASE_BUG}" and left the local queue's jobs locked; the harness unlocked them with \`forceUnlockWorkers\` after the cell`,
        ]
      : [];
  }

  private async withUtils(work: (utils: WorkerUtils) => Promise<void>): Promise<void> {
    const errors: string[] = [];
    const utils = await makeWorkerUtils({
      connectionString: this.url,
      maxPoolSize: 2,
      logger: silentLogger(errors),
    });
    try {
      await work(utils);
    } finally {
      await utils.release();
    }
  }
}

async function enqueue(utils: WorkerUtils, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    await utils.addJobs(
      ids.slice(i, i + INSERT_CHUNK).map((id) => ({ identifier: TASK, payload: { id } })),
    );
  }
}
