/** The systems a throughput cell can run. */
export const SYSTEMS = ['ours', 'pg-boss', 'graphile-worker'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** Settings of the peers, tuned in their favour (docs/benchmarks.md, "Tuning"); `--tune` overrides them. */
export interface PeerTuning {
  /** pg-boss: `localConcurrency` of the one `work()` call, i.e. polling workers. */
  readonly pgBossWorkers: number;
  /** pg-boss: jobs per fetch; a worker runs its batch with `Promise.all`. */
  readonly pgBossBatch: number;
  /** pg-boss: 0 = on the application's pool (`db`); N = its own pool of N beside the app's. */
  readonly pgBossOwnPool: number;
  /** graphile-worker: `concurrentJobs`. */
  readonly graphileConcurrency: number;
  /** graphile-worker: `localQueue.size` (-1: no local queue). */
  readonly graphileLocalQueue: number;
  /** graphile-worker: `completeJobBatchDelay` in ms (-1: complete each job on its own). */
  readonly graphileCompleteBatchDelayMs: number;
}

export const DEFAULT_TUNING: PeerTuning = {
  pgBossWorkers: 20,
  pgBossBatch: 100,
  pgBossOwnPool: 0,
  graphileConcurrency: 2000,
  graphileLocalQueue: 2000,
  graphileCompleteBatchDelayMs: 0,
};

const TUNING_KEYS: Record<string, keyof PeerTuning> = {
  'pg-boss.workers': 'pgBossWorkers',
  'pg-boss.batch': 'pgBossBatch',
  'pg-boss.ownPool': 'pgBossOwnPool',
  'graphile.concurrency': 'graphileConcurrency',
  'graphile.localQueue': 'graphileLocalQueue',
  'graphile.completeJobBatchDelay': 'graphileCompleteBatchDelayMs',
};

export interface BenchOptions {
  /** Due notifications loaded for the throughput cells at the start (the backlog grows to each cell); also the RSS drain. */
  readonly rows: number;
  /** Repetitions of every figure; the table shows the median and the spread. */
  readonly runs: number;
  /** Connections every system may open to PostgreSQL, its queue's own included. */
  readonly budget: number;
  /** Fake provider latencies in ms. */
  readonly latencies: readonly number[];
  /** Shortest warm-up of a cell, s (at least two provider latencies). */
  readonly warmupSeconds: number;
  /** Shortest measured window of a cell, s (at least six provider latencies). */
  readonly windowSeconds: number;
  /** Longest measured window, s: how far a window may grow to span six waves of a batching system. */
  readonly maxWindowSeconds: number;
  /** Backlog sizes of the claim-latency measurement. */
  readonly claimRows: readonly number[];
  /** Due rows of a disabled channel put at the head of the largest claim backlog (0: not measured). */
  readonly excludedRows: number;
  readonly systems: readonly SystemName[];
  readonly tuning: PeerTuning;
  /** Ours: provider calls in flight (its `concurrency`); default the peers' calls in flight. */
  readonly oursConcurrency: number;
}

/** What the peers' default tuning keeps in flight (graphile-worker's concurrentJobs; pg-boss 20 × 100). */
export const PEER_CALLS_IN_FLIGHT = 2_000;

const USAGE = `npm run bench [-- options]

  --rows N            due notifications the throughput cells start from (default 30000; the
                      backlog grows where a cell would use it up) and the RSS drain's size
  --runs N            runs per figure: median and min–max are shown (default 3)
  --budget N          PostgreSQL connections per system, its queue's own included (default 20)
  --latency LIST      fake provider latency in ms (default 0,50,200,1000)
  --warmup S          shortest warm-up of a cell, not measured (default 1; at least 2 latencies)
  --window S          shortest measured window of a cell (default 3; at least 6 latencies)
  --max-window S      a window grows until it spans 6 waves of calls (most calls in
                      flight ÷ rows/s), up to this long (default 12)
  --claim-rows LIST   backlog sizes for the claim latency (default 10000,1000000)
  --excluded-rows N   due rows of a disabled channel at the head of the largest claim
                      backlog (default 1000000; 0 skips it)
  --systems LIST      any of ${SYSTEMS.join(',')} (default all)
  --ours-concurrency N  ours: provider calls in flight (default ${PEER_CALLS_IN_FLIGHT}, the peers'; capped
                      by what its start-up checks accept on the budget)
  --tune LIST         peer settings (defaults: pg-boss.workers=20,pg-boss.batch=100,
                      pg-boss.ownPool=0,graphile.concurrency=2000,graphile.localQueue=2000,
                      graphile.completeJobBatchDelay=0; see docs/benchmarks.md)

Uses DATABASE_URL's server when set (creating and dropping scratch databases there),
otherwise an embedded PostgreSQL with its default durability (fsync and synchronous_commit on).`;

export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      process.stderr.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"\n\n${USAGE}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value\n\n${USAGE}`);
    flags.set(name, value);
  }
  const known = new Set([
    'rows',
    'runs',
    'budget',
    'latency',
    'warmup',
    'window',
    'max-window',
    'claim-rows',
    'excluded-rows',
    'systems',
    'tune',
    'ours-concurrency',
  ]);
  for (const name of flags.keys()) {
    if (!known.has(name)) throw new Error(`unknown option --${name}\n\n${USAGE}`);
  }

  const systems = list(flags, 'systems', [...SYSTEMS]).map((name) => {
    if (!(SYSTEMS as readonly string[]).includes(name)) {
      throw new Error(`--systems: unknown system "${name}" (known: ${SYSTEMS.join(', ')})`);
    }
    return name as SystemName;
  });
  return {
    rows: integer(flags, 'rows', 30_000, 1),
    runs: integer(flags, 'runs', 3, 1),
    budget: integer(flags, 'budget', 20, 3),
    latencies: list(flags, 'latency', ['0', '50', '200', '1000']).map((v) =>
      parseInteger('latency', v, 0),
    ),
    warmupSeconds: positive(flags, 'warmup', 1),
    windowSeconds: positive(flags, 'window', 3),
    maxWindowSeconds: positive(flags, 'max-window', 12),
    claimRows: list(flags, 'claim-rows', ['10000', '1000000']).map((v) =>
      parseInteger('claim-rows', v, 1),
    ),
    excludedRows: integer(flags, 'excluded-rows', 1_000_000, 0),
    systems,
    tuning: parseTuning(flags.get('tune')),
    oursConcurrency: integer(flags, 'ours-concurrency', PEER_CALLS_IN_FLIGHT, 1),
  };
}

function parseTuning(value: string | undefined): PeerTuning {
  const tuning: Record<keyof PeerTuning, number> = { ...DEFAULT_TUNING };
  if (value === undefined) return tuning;
  for (const item of value.split(',').filter((s) => s.trim() !== '')) {
    const [key, raw] = item.split('=', 2).map((s) => s.trim());
    const field = TUNING_KEYS[key];
    if (!field) {
      throw new Error(
        `--tune: unknown key "${key}" (known: ${Object.keys(TUNING_KEYS).join(', ')})`,
      );
    }
    const min =
      field === 'graphileLocalQueue' || field === 'graphileCompleteBatchDelayMs'
        ? -1
        : field === 'pgBossOwnPool'
          ? 0
          : 1;
    tuning[field] = parseInteger(`tune ${key}`, raw ?? '', min);
  }
  return tuning;
}

function list(flags: Map<string, string>, name: string, fallback: string[]): string[] {
  const value = flags.get(name);
  if (value === undefined) return fallback;
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw new Error(`--${name} needs at least one value`);
  return items;
}

function integer(flags: Map<string, string>, name: string, fallback: number, min: number): number {
  const value = flags.get(name);
  return value === undefined ? fallback : parseInteger(name, value, min);
}

function parseInteger(name: string, value: string, min: number): number {
  const parsed = Number(value.replace(/_/g, ''));
  if (!Number.isInteger(parsed) || parsed < min) {
    throw new Error(`--${name} must be an integer ≥ ${min}, got "${value}"`);
  }
  return parsed;
}

function positive(flags: Map<string, string>, name: string, fallback: number): number {
  const value = flags.get(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) {
    throw new Error(`--${name} must be a positive number, got "${value}"`);
  }
  return parsed;
}
