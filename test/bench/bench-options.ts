/** The systems a throughput cell can run. */
export const SYSTEMS = ['ours', 'ours-no-drain', 'raw', 'pg-boss', 'graphile-worker'] as const;
export type SystemName = (typeof SYSTEMS)[number];

export interface BenchOptions {
  /** Due notifications loaded for the throughput cells and the RSS drain. */
  readonly rows: number;
  /** Repetitions of every figure; the table shows the median. */
  readonly runs: number;
  /** A throughput cell drains the backlog or stops claiming after this long, whichever is first. */
  readonly seconds: number;
  readonly concurrencies: readonly number[];
  /** Fake provider latencies in ms. */
  readonly latencies: readonly number[];
  /** Backlog sizes of the claim-latency measurement. */
  readonly claimRows: readonly number[];
  readonly systems: readonly SystemName[];
}

const USAGE = `npm run bench [-- options]

  --rows N            due notifications to load (default 10000; e.g. 100000, 1000000)
  --runs N            runs per figure, the median is shown (default 3)
  --seconds S         a throughput cell stops claiming after S seconds if not drained (default 2)
  --concurrency LIST  default 1,8,16
  --latency LIST      fake provider latency in ms, default 0,20
  --claim-rows LIST   backlog sizes for the claim latency (default 10000,1000000)
  --systems LIST      any of ${SYSTEMS.join(',')} (default all)

Uses DATABASE_URL's server when set (creating and dropping a scratch database there),
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
    'seconds',
    'concurrency',
    'latency',
    'claim-rows',
    'systems',
  ]);
  for (const name of flags.keys()) {
    if (!known.has(name)) throw new Error(`unknown option --${name}\n\n${USAGE}`);
  }

  const rows = integer(flags, 'rows', 10_000, 1);
  const systems = list(flags, 'systems', [...SYSTEMS]).map((name) => {
    if (!(SYSTEMS as readonly string[]).includes(name)) {
      throw new Error(`--systems: unknown system "${name}" (known: ${SYSTEMS.join(', ')})`);
    }
    return name as SystemName;
  });
  return {
    rows,
    runs: integer(flags, 'runs', 3, 1),
    seconds: positive(flags, 'seconds', 2),
    concurrencies: list(flags, 'concurrency', ['1', '8', '16']).map((v) =>
      parseInteger('concurrency', v, 1),
    ),
    latencies: list(flags, 'latency', ['0', '20']).map((v) => parseInteger('latency', v, 0)),
    claimRows: list(flags, 'claim-rows', ['10000', '1000000']).map((v) =>
      parseInteger('claim-rows', v, 1),
    ),
    systems,
  };
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
