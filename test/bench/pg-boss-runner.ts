import { PgBoss, type Db, type Job } from 'pg-boss';
import { Pool } from 'pg';
import type { BenchSystem, PreparedCell } from './bench-system';
import { poolClient, sendNotificationJob } from './peer-job';
import { warmPool } from './warm-pool';

const QUEUE = 'notification-send';
const INSERT_CHUNK = 5_000;

interface NotificationJob {
  id: string;
}

export interface PgBossTuning {
  /** `localConcurrency`: polling workers of the one `work()` call. */
  readonly workers: number;
  /** `batchSize`: jobs per fetch, run together with `Promise.all`. */
  readonly batch: number;
  /**
   * 0: pg-boss on the application's pool (its `db` option), one pool of the
   * budget. N > 0: pg-boss's own pool of N (`max`) beside the job body's pool of
   * budget − N, as its README's constructor sets it up.
   */
  readonly ownPool: number;
}

/**
 * pg-boss 12 as its documentation has a team run it: one job per notification
 * in a queue, `work()` with a batch handler that runs the job body on every job
 * of the batch at once (`Promise.all`); pg-boss completes the batch when the
 * handler returns. The job body calls the provider with no transaction open,
 * then writes the row and its outbox event in one short transaction
 * (`sendNotificationJob`).
 *
 * One connection budget: pg-boss gets the application's own `pg.Pool` through
 * its `db` option (one pool of the whole budget, shared by pg-boss's fetches and
 * completions and the job body's reads and writes) instead of a second pool of
 * its own. `burstWhenBatchFull` lets a worker fetch again at once while its
 * fetches come back full, instead of sleeping out its polling interval.
 */
export class PgBossSystem implements BenchSystem {
  readonly name = 'pg-boss' as const;
  readonly callsInFlight: number;
  readonly connections: number;
  readonly description: string;

  private constructor(
    private readonly url: string,
    budget: number,
    private readonly tuning: PgBossTuning,
  ) {
    this.callsInFlight = tuning.workers * tuning.batch;
    this.connections = budget;
    if (tuning.ownPool >= budget) {
      throw new Error(
        `--tune pg-boss.ownPool (${tuning.ownPool}) must leave the job body part of the budget (${budget})`,
      );
    }
    const pools =
      tuning.ownPool > 0
        ? `pg-boss's own pool of ${tuning.ownPool} (\`max\`) and the job body's \`pg.Pool\` of ${budget - tuning.ownPool}`
        : `pg-boss on the app's one \`pg.Pool\` of ${budget} (its \`db\` option)`;
    this.description = `\`work()\` with \`localConcurrency: ${tuning.workers}\`, \`batchSize: ${tuning.batch}\`, \`burstWhenBatchFull\`, polling 0.5 s, each batch run with \`Promise.all\`; ${pools}`;
  }

  /** Installs pg-boss's schema and the queue and enqueues one job per notification. */
  static async install(
    url: string,
    budget: number,
    tuning: PgBossTuning,
    ids: readonly string[],
  ): Promise<PgBossSystem> {
    const system = new PgBossSystem(url, budget, tuning);
    await system.withAdminBoss(async (boss) => {
      await boss.createQueue(QUEUE);
      await enqueue(boss, ids);
    });
    return system;
  }

  async prepare(): Promise<PreparedCell> {
    const ownPool = this.tuning.ownPool;
    const appPoolSize = this.connections - ownPool;
    const pool = new Pool({ connectionString: this.url, max: appPoolSize });
    const errors: string[] = [];
    pool.on('error', (error) => errors.push(`pool: ${error.message}`));
    await warmPool(pool, appPoolSize);
    const db: Db = { executeSql: (text, values) => pool.query(text, values) };
    const boss = new PgBoss(ownPool > 0 ? { connectionString: this.url, max: ownPool } : { db });
    boss.on('error', (error) => errors.push(String(error)));
    await boss.start();
    const withPgClient = poolClient(pool);
    let ranDry = false;
    let stopping = false;
    return {
      start: async () => {
        await boss.work<NotificationJob>(
          QUEUE,
          {
            localConcurrency: this.tuning.workers,
            batchSize: this.tuning.batch,
            burstWhenBatchFull: true,
            pollingIntervalSeconds: 0.5,
          },
          async (jobs: Job<NotificationJob>[]) => {
            if (jobs.length < this.tuning.batch && !stopping) ranDry = true;
            await Promise.all(
              jobs.map(async (job) => {
                try {
                  await sendNotificationJob(withPgClient, job.data.id, job.id);
                } catch (error) {
                  errors.push(`job: ${String(error)}`);
                  throw error;
                }
              }),
            );
          },
        );
      },
      stop: async () => {
        stopping = true;
        try {
          // Stops fetching and waits for the batches in flight, which pg-boss then completes.
          await boss.offWork(QUEUE, { wait: true });
          await boss.stop({ graceful: true, timeout: 30_000 });
        } finally {
          await pool.end();
        }
        if (errors.length > 0) throw new Error(`pg-boss errors: ${errors.slice(0, 5).join('; ')}`);
        return { ranDry };
      },
    };
  }

  async enqueueJobs(ids: readonly string[]): Promise<void> {
    await this.withAdminBoss((boss) => enqueue(boss, ids));
  }

  /** Completed jobs are kept by pg-boss: deleted, and one new job per row put back. */
  async restoreJobs(processedIds: readonly string[]): Promise<void> {
    await this.withAdminBoss(async (boss) => {
      const { rows } = await boss
        .getDb()
        .executeSql(
          `SELECT count(*)::int AS active FROM pgboss.job WHERE name = $1 AND state = 'active'`,
          [QUEUE],
        );
      const active = (rows[0] as { active: number }).active;
      if (active > 0) throw new Error(`pg-boss left ${active} active jobs behind`);
      await boss.deleteStoredJobs(QUEUE);
      await enqueue(boss, processedIds);
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  notes(): string[] {
    return [];
  }

  /** A short-lived instance of its own for setup between cells (maintenance off). */
  private async withAdminBoss(work: (boss: PgBoss) => Promise<void>): Promise<void> {
    const boss = new PgBoss({
      connectionString: this.url,
      max: 2,
      supervise: false,
      schedule: false,
    });
    boss.on('error', (error) => process.stderr.write(`pg-boss (setup) error: ${String(error)}\n`));
    await boss.start();
    try {
      await work(boss);
    } finally {
      await boss.stop({ graceful: false });
    }
  }
}

async function enqueue(boss: PgBoss, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    await boss.insert(
      QUEUE,
      ids.slice(i, i + INSERT_CHUNK).map((id) => ({ data: { id } })),
    );
  }
}
