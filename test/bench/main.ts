import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
/**
 * `npm run bench [-- --latency 200 --runs 1]`: our retry cycle against pg-boss
 * and graphile-worker run as their documentation has a team run them, every
 * system on one connection budget, at provider latencies from 0 to 1 s, beside
 * the per-row and set-based write limits through `pg`; plus claim latency, SQL round trips and
 * RSS. Progress on stderr, the markdown report on stdout. Not part of
 * `npm test` (a tiny smoke run is). See docs/benchmarks.md.
 */
import 'reflect-metadata';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import {
  checkpoint,
  createMigratedScratchDatabase,
  insertBenchChannel,
  loadDueRows,
  openBenchServer,
  resetProcessedRows,
  vacuum,
  withClient,
  type BenchServer,
  type ScratchDatabase,
} from './bench-database';
import { parseBenchOptions, type BenchOptions } from './bench-options';
import type { BenchSystem } from './bench-system';
import { measureClaimLatency, type ClaimLatency } from './claim-latency';
import { compiledCopy } from '../support/compiled-copy';
import { ConnectionSampler } from './connection-sampler';
import { describeEnvironment } from './environment';
import { GraphileWorkerSystem } from './graphile-worker-runner';
import { ourMaxConcurrency } from './our-max-concurrency';
import { BATCH_SIZE, OursSystem } from './ours-system';
import { PgBossSystem } from './pg-boss-runner';
import { progress } from './progress';
import { profileCell, type ProfiledCell } from './profiled-cell';
import { RawWriteLimit } from './raw-limit';
import type { MemoryDrainResult } from './memory-drain';
import { renderReport, type MemoryFigures } from './report';
import { measureRoundTrips } from './round-trip-figures';
import { SetBasedWriteLimit } from './set-based-write-limit';
import { RateHistory } from './rate-history';
import { measureThroughput, type ThroughputCell } from './throughput';
import { Backlog } from './backlog';

/** Everything opened so far, closed in reverse order on the way out (also on Ctrl-C). */
const cleanups: Array<() => Promise<unknown>> = [];
const execFileAsync = promisify(execFile);

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2));
  const loadAtStart = loadavg();
  const started = performance.now();
  const server = await openBenchServer();
  cleanups.push(() => server.stop());
  const environment = await withClient(server.url, (client) =>
    describeEnvironment(client, server.description),
  );
  progress(
    `${environment.postgres}; load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  );

  const roundTrips = await measureRoundTrips(server.url, options.runs);
  const claim = await claimLatencies(server, options);
  const { throughput, memory, systems, profile } = await throughputAndMemory(server, options);

  const results = {
    options,
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])]
      .join(' ')
      .trim(),
    environment,
    loadAtStart,
    durationS: (performance.now() - started) / 1000,
    systems,
    throughput,
    profile,
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
    const sizes = [...options.claimRows].sort((a, b) => a - b);
    const cases = sizes.map((size) => ({ size, excluded: 0 }));
    if (options.excludedRows > 0) {
      cases.push({ size: sizes[sizes.length - 1], excluded: options.excludedRows });
    }
    for (const { size, excluded } of cases) {
      const what = `${size} due rows${excluded > 0 ? ` + ${excluded} of a disabled channel at the head` : ''}`;
      progress(`claim latency: loading ${what}`);
      const result = await measureClaimLatency(db.url, client, size, excluded);
      progress(
        `claim latency at ${what}: median ${result.claimMedianMs.toFixed(3)} ms, p95 ${result.claimP95Ms.toFixed(3)} ms`,
      );
      results.push(result);
    }
  } finally {
    await client.end();
    await db.drop();
  }
  return results;
}

async function throughputAndMemory(
  server: BenchServer,
  options: BenchOptions,
): Promise<{
  throughput: ThroughputCell[];
  memory: MemoryFigures | null;
  systems: readonly BenchSystem[];
  profile: ProfiledCell | null;
}> {
  const db = await scratch(server, 'throughput');
  const admin = await connect(db.url);
  const systems: BenchSystem[] = [];
  let sampler: ConnectionSampler | null = null;
  try {
    await insertBenchChannel(admin);
    progress(`loading ${options.rows} due rows`);
    await loadDueRows(admin, options.rows);
    const vacuumTables = ['notifications', 'notification_outbox'];
    const ids = async (): Promise<string[]> =>
      (await admin.query<{ id: string }>(`SELECT id FROM notifications ORDER BY due_at`)).rows.map(
        (row) => row.id,
      );
    const budget = options.budget;
    for (const name of options.systems) {
      if (name === 'ours') {
        const accepted = await ourMaxConcurrency(db.url, budget, BATCH_SIZE);
        const concurrency = Math.min(options.oursConcurrency, accepted);
        progress(
          `ours: concurrency ${concurrency} (asked ${options.oursConcurrency}; its start-up checks accept up to ${accepted} on a pool of ${budget})`,
        );
        systems.push(new OursSystem(db.url, budget, concurrency, accepted));
      } else if (name === 'pg-boss') {
        progress(`pg-boss: installing its schema, enqueuing ${options.rows} jobs`);
        const tuning = {
          workers: options.tuning.pgBossWorkers,
          batch: options.tuning.pgBossBatch,
          ownPool: options.tuning.pgBossOwnPool,
        };
        systems.push(await PgBossSystem.install(db.url, budget, tuning, await ids()));
        vacuumTables.push('pgboss.job');
      } else {
        progress(`graphile-worker: installing its schema, enqueuing ${options.rows} jobs`);
        const tuning = {
          concurrency: options.tuning.graphileConcurrency,
          localQueue: options.tuning.graphileLocalQueue,
          completeBatchDelayMs: options.tuning.graphileCompleteBatchDelayMs,
        };
        systems.push(await GraphileWorkerSystem.install(db.url, budget, tuning, await ids()));
        vacuumTables.push('graphile_worker._private_jobs');
      }
    }
    await vacuum(admin, vacuumTables);
    await checkpoint(admin);

    const adminPid = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]
      .pid;
    sampler = await ConnectionSampler.open(db.url, [adminPid]);
    // The set-based limit first: the fastest writer, so in the first round it is the one to run
    // dry (the backlog is not sized yet), and the round starts again after one cell, not two.
    const writeLimits = [new SetBasedWriteLimit(db.url, budget), new RawWriteLimit(db.url, budget)];
    const ours = systems.find((s): s is OursSystem => s instanceof OursSystem);
    const memory = ours ? await drainForMemory(db.url, options, ours) : null;
    if (memory) {
      await resetProcessedRows(admin);
      await vacuum(admin, vacuumTables);
    }
    const context = {
      admin,
      sampler,
      options,
      systems,
      writeLimits,
      vacuumTables,
      backlog: new Backlog(admin, options.rows, systems, vacuumTables),
    };
    const history = new RateHistory();
    const throughput = await measureThroughput(context, history);
    const profile = ours ? await profileCell(context, history, ours) : null;
    return { throughput, memory, systems: [...writeLimits, ...systems], profile };
  } finally {
    await sampler?.close();
    for (const system of systems) await system.close();
    await admin.end();
    await db.drop();
  }
}

/**
 * RSS and heap while our cycle (drain mode, 0 ms) drains the whole backlog: the
 * largest drain of this run, in a child process of its own (memory-drain.ts).
 */
async function drainForMemory(
  url: string,
  options: BenchOptions,
  ours: OursSystem,
): Promise<MemoryFigures> {
  const concurrency = ours.callsInFlight;
  const root = join(__dirname, '..', '..');
  progress('memory: compiling the library and the harness to JavaScript, as a host deploys it');
  // What the memory child needs: the library, the app's database helpers and the harness.
  const compiled = compiledCopy(root, ['libs', 'src', 'test/bench']);
  progress(
    `memory: draining all ${options.rows} rows, concurrency ${concurrency}, 0 ms, in a child process`,
  );
  const { stdout } = await execFileAsync(
    process.execPath,
    [
      compiled.file('test/bench/memory-drain.ts'),
      url,
      String(options.rows),
      String(concurrency),
      String(ours.connections),
    ],
    { cwd: root, maxBuffer: 4 * 1024 * 1024 },
  ).finally(() => compiled.remove());
  const drain = JSON.parse(stdout.trim().split('\n').pop() ?? '') as MemoryDrainResult;
  progress(
    `memory: RSS ${drain.cold.rssMb.toFixed(1)} (cold) → ${drain.warm.rssMb.toFixed(1)} (after ${drain.warmAfterRows} rows) → ${drain.after.rssMb.toFixed(1)} MB, ${drain.drainedRows} rows at ${drain.rowsPerSec.toFixed(0)} rows/s in ${drain.cycles} cycles`,
  );
  if (drain.drainedRows !== options.rows) {
    throw new Error(`drained ${drain.drainedRows} rows, expected ${options.rows}`);
  }
  return { ...drain, concurrency };
}

async function scratch(server: BenchServer, purpose: string): Promise<ScratchDatabase> {
  const db = await createMigratedScratchDatabase(server.url, purpose);
  cleanups.push(() => db.drop());
  return db;
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
