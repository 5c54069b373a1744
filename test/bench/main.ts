/**
 * `npm run bench [-- --rows 100000 --runs 3]`: our retry cycle against the raw
 * per-row limit through `pg`, pg-boss and graphile-worker on one PostgreSQL,
 * plus claim latency, SQL round trips and RSS. Progress on stderr, the markdown
 * table on stdout. Not part of `npm test`. See docs/benchmarks.md.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import {
  checkpoint,
  createMigratedScratchDatabase,
  insertBenchChannel,
  loadDueRows,
  openBenchServer,
  vacuum,
  withClient,
  type BenchServer,
  type ScratchDatabase,
} from './bench-database';
import { parseBenchOptions, type BenchOptions } from './bench-options';
import { measureClaimLatency, type ClaimLatency } from './claim-latency';
import { describeEnvironment } from './environment';
import { fakeProvider } from './fake-provider';
import { GraphileWorkerBench } from './graphile-worker-runner';
import { sampleMemory } from './memory';
import { drainWithCycles, startOurCycleApp } from './our-cycle';
import { PgBossBench } from './pg-boss-runner';
import { progress } from './progress';
import { renderReport, type MemoryFigures } from './report';
import { measureRoundTrips } from './round-trip-figures';
import type { RoundTrips } from './round-trips';
import { BATCH_SIZE, measureThroughput, resetBacklog, type ThroughputCell } from './throughput';

/** Everything opened so far, closed in reverse order on the way out (also on Ctrl-C). */
const cleanups: Array<() => Promise<unknown>> = [];

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2));
  const started = performance.now();
  const server = await openBenchServer();
  cleanups.push(() => server.stop());
  const environment = await withClient(server.url, (client) =>
    describeEnvironment(client, server.description),
  );
  progress(`${environment.postgres}`);

  const roundTrips: RoundTrips | null = await measureRoundTrips(server.url, options.runs);
  const claim = await claimLatencies(server, options);
  const { throughput, memory } = await throughputAndMemory(server, options);

  const results = {
    options,
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])]
      .join(' ')
      .trim(),
    environment,
    durationS: (performance.now() - started) / 1000,
    throughput,
    claim,
    roundTrips,
    memory,
  };
  process.stdout.write(`${renderReport(results)}\n`);
}

async function claimLatencies(server: BenchServer, options: BenchOptions): Promise<ClaimLatency[]> {
  const db = await scratch(server, 'claim');
  const results: ClaimLatency[] = [];
  const client = await connect(db.url);
  try {
    await insertBenchChannel(client);
    for (const size of [...options.claimRows].sort((a, b) => a - b)) {
      progress(`claim latency: loading ${size} due rows`);
      const result = await measureClaimLatency(db.url, client, size);
      progress(
        `claim latency at ${size} due rows: median ${result.scanMedianMs.toFixed(3)} ms, p95 ${result.scanP95Ms.toFixed(3)} ms`,
      );
      results.push(result);
    }
  } finally {
    await client.end();
    await dropScratch(db);
  }
  return results;
}

async function throughputAndMemory(
  server: BenchServer,
  options: BenchOptions,
): Promise<{ throughput: ThroughputCell[]; memory: MemoryFigures | null }> {
  const db = await scratch(server, 'throughput');
  const admin = await connect(db.url);
  let pgBoss: PgBossBench | null = null;
  let graphile: GraphileWorkerBench | null = null;
  try {
    await insertBenchChannel(admin);
    progress(`loading ${options.rows} due rows`);
    await loadDueRows(admin, options.rows);
    const vacuumTables = ['notifications'];
    // One job per notification, oldest due first (only when a queue is benchmarked).
    const dueIds = async (): Promise<string[]> =>
      (await admin.query<{ id: string }>(`SELECT id FROM notifications ORDER BY due_at`)).rows.map(
        (row) => row.id,
      );
    if (options.systems.includes('pg-boss')) {
      progress(`pg-boss: installing its schema, enqueuing ${options.rows} jobs`);
      pgBoss = await PgBossBench.start(db.url, Math.max(...options.concurrencies));
      await pgBoss.enqueue(await dueIds());
      vacuumTables.push('pgboss.job');
    }
    if (options.systems.includes('graphile-worker')) {
      progress(`graphile-worker: installing its schema, enqueuing ${options.rows} jobs`);
      graphile = await GraphileWorkerBench.start(db.url);
      await graphile.enqueue(await dueIds());
      vacuumTables.push('graphile_worker._private_jobs');
    }
    await vacuum(admin, vacuumTables);
    await checkpoint(admin);
    const context = { url: db.url, admin, options, pgBoss, graphile, vacuumTables };

    let memory: MemoryFigures | null = null;
    if (options.systems.includes('ours')) {
      memory = await drainForMemory(db.url, options);
      await resetBacklog(context);
    }
    const throughput = await measureThroughput(context);
    return { throughput, memory };
  } finally {
    await pgBoss?.stop();
    await graphile?.stop();
    await admin.end();
    await dropScratch(db);
  }
}

/** RSS before and after our cycle (drain mode) drains the whole backlog, the largest one of this run. */
async function drainForMemory(url: string, options: BenchOptions): Promise<MemoryFigures> {
  const concurrency = Math.max(...options.concurrencies);
  fakeProvider.latencyMs = 0;
  const app = await startOurCycleApp({ url, concurrency, batchSize: BATCH_SIZE, drain: true });
  try {
    const before = sampleMemory();
    progress(`memory: draining all ${options.rows} rows, concurrency ${concurrency}, 0 ms`);
    const drain = await drainWithCycles(app, Number.POSITIVE_INFINITY);
    const after = sampleMemory();
    const rowsPerSec = (drain.processed * 1000) / drain.elapsedMs;
    progress(
      `memory: RSS ${before.rssMb.toFixed(1)} → ${after.rssMb.toFixed(1)} MB, ${drain.processed} rows at ${rowsPerSec.toFixed(0)} rows/s in ${drain.cycles} cycles`,
    );
    if (drain.processed !== options.rows) {
      throw new Error(`drained ${drain.processed} rows, expected ${options.rows}`);
    }
    return {
      before,
      after,
      drainedRows: drain.processed,
      rowsPerSec,
      cycles: drain.cycles,
      concurrency,
    };
  } finally {
    await app.close();
  }
}

async function scratch(server: BenchServer, purpose: string): Promise<ScratchDatabase> {
  const db = await createMigratedScratchDatabase(server.url, purpose);
  cleanups.push(() => db.drop());
  return db;
}

async function dropScratch(db: ScratchDatabase): Promise<void> {
  await db.drop();
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  cleanups.length = 0;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    // Connections cut by the cleanup (DROP DATABASE … WITH (FORCE), the server stopping) emit
    // errors on clients that were mid-query; they are expected now.
    process.on('uncaughtException', () => undefined);
    progress(`${signal}: dropping scratch databases and stopping the server`);
    void cleanUp().finally(() => process.exit(130));
  });
}

main()
  .then(cleanUp)
  .catch(async (error: unknown) => {
    // After a signal, the errors of work cut short by the cleanup are expected.
    if (interrupted) return;
    console.error(error);
    await cleanUp();
    process.exitCode = 1;
  });
