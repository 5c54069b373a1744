import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ChaosOptions {
  /** Notifications seeded. */
  readonly rows: number;
  /** Instance processes running at once. */
  readonly instances: number;
  /** Fixes the ids, the provider's answers and the chaos schedule. */
  readonly seed: number;
  /** The run fails if rows are still open after this long. */
  readonly maxDurationS: number;
  /** Mean gap between SIGKILLs of a random instance (each restarted at once). */
  readonly killEveryMs: number;
  /** Mean gap between pg_terminate_backend rounds on a random instance's worker connections. */
  readonly terminateEveryMs: number;
  /**
   * Mean gap between kills of the backends that carry group commits (the outbox
   * held a moment so that settle statements queue behind it, then ended).
   */
  readonly groupCommitKillEveryMs: number;
  /** SIGTERMs sent to an instance in the middle of a cycle (each restarted after its exit). */
  readonly sigterms: number;
  /**
   * SIGSTOPs of the lease owner in the middle of its cycle, each for longer than
   * the lease's TTL, then SIGCONT: a live former owner whose lease was taken over.
   */
  readonly sigstops: number;
  readonly concurrency: number;
  readonly batchSize: number;
  /** Pending rows fall due over this long after the start. */
  readonly spreadMs: number;
  /** Where logs, metric dumps and spans go; default a new temp directory. */
  readonly outDir: string;
  /** Keep the scratch database for inspection. */
  readonly keepDatabase: boolean;
}

/** `npm run chaos` with no flags: the full size. */
export const FULL_RUN: Omit<ChaosOptions, 'outDir'> = {
  rows: 10_000,
  instances: 3,
  seed: 1,
  maxDurationS: 1800,
  killEveryMs: 5_000,
  terminateEveryMs: 3_000,
  groupCommitKillEveryMs: 4_000,
  sigterms: 2,
  sigstops: 2,
  concurrency: 8,
  batchSize: 200,
  spreadMs: 20_000,
  keepDatabase: false,
};

export function defaultOutDir(): string {
  return join(tmpdir(), `pin-chaos-${new Date().toISOString().replace(/[:.]/g, '-')}`);
}

const USAGE = `npm run chaos [-- --rows 10000 --instances 3 --seed 1 --max-duration-s 1800
  --kill-every-ms 5000 --terminate-every-ms 3000 --group-commit-kill-every-ms 4000 --sigterms 2 --sigstops 2 --concurrency 8
  --batch-size 200 --spread-ms 20000 --out DIR --keep-database]`;

const NUMERIC: Record<string, keyof ChaosOptions> = {
  '--rows': 'rows',
  '--instances': 'instances',
  '--seed': 'seed',
  '--max-duration-s': 'maxDurationS',
  '--kill-every-ms': 'killEveryMs',
  '--terminate-every-ms': 'terminateEveryMs',
  '--group-commit-kill-every-ms': 'groupCommitKillEveryMs',
  '--sigterms': 'sigterms',
  '--sigstops': 'sigstops',
  '--concurrency': 'concurrency',
  '--batch-size': 'batchSize',
  '--spread-ms': 'spreadMs',
};

export function parseChaosOptions(argv: readonly string[]): ChaosOptions {
  const options: Record<string, unknown> = { ...FULL_RUN, outDir: defaultOutDir() };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (flag === '--keep-database') {
      options.keepDatabase = true;
      continue;
    }
    const value = argv[++i];
    if (flag === '--out' && value) {
      options.outDir = value;
      continue;
    }
    const key = NUMERIC[flag];
    const number = Number(value);
    if (!key || value === undefined || !Number.isInteger(number) || number < 0) {
      throw new Error(`bad argument ${flag} ${value ?? ''}\n${USAGE}`);
    }
    options[key] = number;
  }
  const parsed = options as unknown as ChaosOptions;
  if (parsed.rows < 1 || parsed.instances < 1 || parsed.concurrency < 1 || parsed.batchSize < 1)
    throw new Error(`rows, instances, concurrency and batch size must be at least 1\n${USAGE}`);
  return parsed;
}
