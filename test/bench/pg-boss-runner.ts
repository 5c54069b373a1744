import { performance } from 'node:perf_hooks';
import PgBoss from 'pg-boss';
import { Pool } from 'pg';
import type { CellResult } from './cell-result';
import { POOL_HEADROOM } from './our-cycle';
import { sleep } from './progress';
import { warmPool } from './warm-pool';
import { processById } from './unit-of-work';

const QUEUE = 'notification-retry';
const INSERT_CHUNK = 5_000;

interface NotificationJob {
  id: string;
}

/**
 * pg-boss 10 doing the same job: one job per notification, the job body is the
 * unit of work by id. Concurrency C is C `work()` workers, each processing
 * its fetched batch one job at a time, so at most C rows are in flight.
 *
 * Tuned in pg-boss's favour: after every fetch a pg-boss 10 worker sleeps for
 * the rest of its polling interval (≥ 0.5 s), which caps a worker at
 * `batchSize` jobs per 0.5 s; a handler that got a full batch therefore calls
 * `notifyWorker()` so the worker fetches again at once. 100 jobs per fetch was
 * the fastest of 10, 25, 50, 100, 200 on the reference machine. Completion is
 * one statement per batch.
 */
export class PgBossBench {
  static readonly BATCH = 100;

  private constructor(
    private readonly boss: PgBoss,
    private readonly url: string,
  ) {}

  /** Installs pg-boss's schema and the queue; maintenance and cron are off, as in a worker-only process. */
  static async start(url: string, maxConcurrency: number): Promise<PgBossBench> {
    const boss = new PgBoss({
      connectionString: url,
      max: maxConcurrency + POOL_HEADROOM,
      supervise: false,
      schedule: false,
    });
    boss.on('error', (error) => process.stderr.write(`pg-boss error: ${String(error)}\n`));
    await boss.start();
    await boss.createQueue(QUEUE);
    return new PgBossBench(boss, url);
  }

  /** One job per notification id. */
  async enqueue(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
      await this.boss.insert(
        ids.slice(i, i + INSERT_CHUNK).map((id) => ({ name: QUEUE, data: { id } })),
      );
    }
  }

  async run(concurrency: number, capMs: number, due: number): Promise<CellResult> {
    const pool = new Pool({ connectionString: this.url, max: concurrency + POOL_HEADROOM });
    const consumedJobs: string[] = [];
    const consumedRows: string[] = [];
    let processed = 0;
    let inFlight = 0;
    let stopping = false;
    let lastFinished = 0;
    await warmPool(pool, concurrency).catch(async (error: unknown) => {
      await pool.end();
      throw error;
    });
    const started = performance.now();
    const deadline = started + capMs;
    const handler = async (
      jobs: PgBoss.Job<NotificationJob>[],
      workerId: string | undefined,
    ): Promise<void> => {
      inFlight++;
      try {
        for (const job of jobs) {
          consumedJobs.push(job.id);
          consumedRows.push(job.data.id);
          // Past the cap: the job is consumed (pg-boss completes the batch) but its row stays due.
          if (stopping || performance.now() >= deadline) continue;
          const client = await pool.connect();
          try {
            if (await processById(client, job.data.id)) processed++;
          } finally {
            client.release();
          }
          lastFinished = performance.now();
        }
        // A full batch means more are waiting: skip the rest of the polling interval.
        if (jobs.length === PgBossBench.BATCH && workerId && !stopping) {
          this.boss.notifyWorker(workerId);
        }
      } finally {
        inFlight--;
      }
    };
    try {
      for (let i = 0; i < concurrency; i++) {
        // The id is known once work() resolves; a handler can in principle run before that.
        const worker: { id?: string } = {};
        worker.id = await this.boss.work<NotificationJob>(
          QUEUE,
          { batchSize: PgBossBench.BATCH, pollingIntervalSeconds: 0.5 },
          (jobs) => handler(jobs, worker.id),
        );
      }
      while (performance.now() < deadline && processed < due) await sleep(2);
      stopping = true;
      await this.boss.offWork(QUEUE);
      // A fetch already sent when the workers were told to stop still hands its jobs over.
      await sleep(50);
      while (inFlight > 0) await sleep(2);
      await this.waitForCompletions();
      const elapsedMs = (lastFinished || performance.now()) - started;
      // Put back one job per consumed notification, so every cell starts with one job per due row.
      await this.deleteJobs(consumedJobs);
      await this.enqueue(consumedRows);
      return { processed, errors: 0, elapsedMs };
    } finally {
      await pool.end();
    }
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 5_000 });
  }

  /** pg-boss completes a batch after its handler returns, without awaiting it. */
  private async waitForCompletions(): Promise<void> {
    const db = this.boss.getDb();
    for (let i = 0; i < 500; i++) {
      const { rows } = await db.executeSql(
        `SELECT count(*)::int AS active FROM pgboss.job WHERE name = $1 AND state = 'active'`,
        [QUEUE],
      );
      if ((rows[0] as { active: number }).active === 0) return;
      await sleep(10);
    }
    throw new Error('pg-boss left active jobs behind');
  }

  private async deleteJobs(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
      await this.boss.deleteJob(QUEUE, ids.slice(i, i + INSERT_CHUNK));
    }
  }
}
