import { performance } from 'node:perf_hooks';
import type { Client } from 'pg';
import type { BenchOptions } from './bench-options';
import { countDue, countWritten, resetProcessedRows, vacuum } from './bench-database';
import type { BenchSystem } from './bench-system';
import { cellWindow, countRate, rateInWindow } from './cell-window';
import {
  connectionFigures,
  type ConnectionFigures,
  type ConnectionSample,
  type ConnectionSampler,
} from './connection-sampler';
import { fakeProvider } from './fake-provider';
import { progress, rssMb, sleep } from './progress';

/** Waves of calls (most calls seen in flight ÷ rows/s) a measured window spans at least, up to `--max-window`. */
export const MIN_WAVES = 6;

/** A stop (calls in flight finishing, pools closing) that takes longer is a hang, not a figure. */
const STOP_TIMEOUT_MS = 120_000;

async function withinTime<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One run of one (system, latency) cell. */
export interface CellRun {
  /** Rows per second over the measured window (slope of the provider's returns). */
  readonly rowsPerSec: number;
  /** Provider calls in the whole cell, each committed as Sent with its outbox event. */
  readonly calls: number;
  /** The most calls seen in flight at once. */
  readonly maxInFlight: number;
  /** The system ran out of due rows before it was stopped: not a steady state. */
  readonly ranDry: boolean;
  readonly connections: ConnectionFigures;
  /** The most connections seen open over the whole cell (warm-up and stop included). */
  readonly openMax: number;
  /** How long the measured window was, ms (it grows for systems that work in long waves). */
  readonly windowMs: number;
}

export interface ThroughputCell {
  readonly system: BenchSystem['name'];
  readonly latencyMs: number;
  readonly callsInFlight: number;
  readonly runs: CellRun[];
}

export interface ThroughputContext {
  readonly admin: Client;
  readonly sampler: ConnectionSampler;
  readonly options: BenchOptions;
  /** The systems of `--systems`, in the order they run within a round. */
  readonly systems: readonly BenchSystem[];
  /** Measured at 0 ms in every run: the per-row write limit every ideal is capped by. */
  readonly writeLimit: BenchSystem;
  /** Tables whose dead tuples are vacuumed away between cells. */
  readonly vacuumTables: readonly string[];
}

/**
 * Every (latency, system) cell, `runs` times, the systems interleaved within
 * each round so that drift (autovacuum, WAL, page cache, the neighbours on the
 * machine) spreads over all of them. The write limit runs at 0 ms in every
 * round of the first latency (or in rounds of its own if 0 ms is not asked
 * for). Between cells the processed rows are put back, so every cell starts
 * from the same backlog.
 */
export async function measureThroughput(context: ThroughputContext): Promise<ThroughputCell[]> {
  const { options } = context;
  const cells = new Map<string, ThroughputCell>();
  const blocks: Array<{ latencyMs: number; systems: readonly BenchSystem[] }> =
    options.latencies.map((latencyMs) => ({
      latencyMs,
      systems: latencyMs === 0 ? [context.writeLimit, ...context.systems] : context.systems,
    }));
  if (!options.latencies.includes(0))
    blocks.unshift({ latencyMs: 0, systems: [context.writeLimit] });
  for (const { latencyMs, systems } of blocks) {
    for (let run = 0; run < options.runs; run++) {
      for (const system of systems) {
        const result = await runCell(context, system, latencyMs);
        const key = `${system.name}|${latencyMs}`;
        const cell = cells.get(key) ?? {
          system: system.name,
          latencyMs,
          callsInFlight: system.callsInFlight,
          runs: [],
        };
        cell.runs.push(result);
        cells.set(key, cell);
        const c = result.connections;
        progress(
          `${system.name.padEnd(15)} ${String(latencyMs).padStart(4)} ms, run ${run + 1}/${options.runs}: ` +
            `${result.rowsPerSec.toFixed(0).padStart(5)} rows/s over ${(result.windowMs / 1000).toFixed(1)} s (${result.calls} calls, ≤ ${result.maxInFlight} in flight; ` +
            `connections in use ${c.inUseMean.toFixed(1)} / ${c.inUseMax}, idle in tx ${c.idleInTransactionMean.toFixed(1)} / ${c.idleInTransactionMax}, open ≤ ${result.openMax}` +
            `${result.ranDry ? '; RAN DRY' : ''}; RSS ${rssMb()})`,
        );
      }
    }
  }
  return [...cells.values()];
}

async function runCell(
  context: ThroughputContext,
  system: BenchSystem,
  latencyMs: number,
): Promise<CellRun> {
  const { options, sampler, admin } = context;
  const { warmupMs, windowMs } = cellWindow(
    latencyMs,
    options.warmupSeconds,
    options.windowSeconds,
  );
  fakeProvider.latencyMs = latencyMs;
  const prepared = await system.prepare();
  sampler.start();
  fakeProvider.startRecording();
  const started = performance.now();
  const measureFrom = started + warmupMs;
  let measureTo = measureFrom + windowMs;
  let ranDry = false;
  let samples: ConnectionSample[] = [];
  try {
    await prepared.start();
    await sleep(Math.max(0, measureTo - performance.now()));
    // A system that works in waves (a batch fetched, called, written, then the next) must show
    // enough of them in the window: the window grows to MIN_WAVES of its period, within the cap.
    const maxWindowMs = Math.max(windowMs, options.maxWindowSeconds * 1000);
    for (;;) {
      const rate = countRate(fakeProvider.returned, measureFrom, measureTo);
      // A wave: as many calls as were seen in flight at once, at the rate measured so far.
      const periodMs = latencyMs > 0 && rate > 0 ? (fakeProvider.maxInFlight / rate) * 1000 : 0;
      const neededMs = Math.min(maxWindowMs, MIN_WAVES * periodMs);
      if (!(neededMs > measureTo - measureFrom)) break;
      measureTo = measureFrom + neededMs;
      await sleep(Math.max(0, measureTo - performance.now()));
    }
    ({ ranDry } = await withinTime(prepared.stop(), STOP_TIMEOUT_MS, `${system.name} stopping`));
  } finally {
    samples = await sampler.stop();
  }
  const returned = [...fakeProvider.returned];
  const maxInFlight = fakeProvider.maxInFlight;
  if (fakeProvider.inFlight !== 0) {
    throw new Error(
      `${system.name} stopped with ${fakeProvider.inFlight} provider calls in flight`,
    );
  }

  // Every call must have been written: the row Sent after its second attempt, with its event.
  const written = await countWritten(admin);
  if (
    written.sent !== returned.length ||
    written.secondAttempts !== written.sent ||
    written.events !== written.sent
  ) {
    throw new Error(
      `${system.name} at ${latencyMs} ms: ${returned.length} provider calls, but ${written.sent} rows Sent (${written.secondAttempts} as expected) and ${written.events} outbox events`,
    );
  }
  const remainingDue = await countDue(admin);
  const processedIds = await resetProcessedRows(admin);
  await system.restoreJobs(processedIds);
  await vacuum(admin, context.vacuumTables);
  const due = await countDue(admin);
  if (due !== options.rows) {
    throw new Error(`after reset ${due} rows are due, expected ${options.rows}`);
  }
  return {
    rowsPerSec: rateInWindow(returned, measureFrom, measureTo),
    calls: returned.length,
    maxInFlight,
    ranDry: ranDry || remainingDue === 0,
    connections: connectionFigures(samples, measureFrom, measureTo),
    openMax: samples.length > 0 ? Math.max(...samples.map((s) => s.open)) : Number.NaN,
    windowMs: measureTo - measureFrom,
  };
}
