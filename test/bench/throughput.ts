import { performance } from 'node:perf_hooks';
import type { Client } from 'pg';
import type { BenchOptions } from './bench-options';
import { countDue, countWritten, resetProcessedRows, vacuum } from './bench-database';
import type { BenchSystem } from './bench-system';
import type { Backlog } from './backlog';
import { rowsNeeded, type CellPlan } from './backlog-size';
import { cellWindow, countRate, MIN_WAVES, rateInWindow } from './cell-window';
import {
  connectionFigures,
  type ConnectionFigures,
  type ConnectionSample,
  type ConnectionSampler,
} from './connection-sampler';
import { fakeProvider, timerLatenessPercent, type SleptTally } from './fake-provider';
import { progress, rssMb, sleep } from './progress';
import type { RateHistory } from './rate-history';
import { WindowProbe, type WindowCost } from './window-probe';

/** A stop (calls in flight finishing, pools closing) that takes longer is a hang, not a figure. */
const STOP_TIMEOUT_MS = 120_000;

/** Times a round may be run again on a larger backlog before its cells are kept as they ran. */
const MAX_GROWTHS = 4;

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
  /** Provider returns inside the measured window. */
  readonly rowsInWindow: number;
  /** The most calls seen in flight at once. */
  readonly maxInFlight: number;
  /** Due rows when the cell started. */
  readonly backlog: number;
  /** The system ran out of due rows before it was stopped: not a steady state. */
  readonly ranDry: boolean;
  /** Calls over the cell from its start to the last return: a lower bound of a dry cell's rate. */
  readonly paceRowsPerSec: number;
  readonly connections: ConnectionFigures;
  /** The most connections seen open over the whole cell (warm-up and stop included). */
  readonly openMax: number;
  /** How long the measured window was, ms (it grows for systems that work in long waves). */
  readonly windowMs: number;
  /** Process CPU over the window ÷ rows in it, µs: the system's own cost plus the fake provider's. */
  readonly cpuUsPerRow: number;
  /** CPU of the whole process over the window, µs. */
  readonly cpuUs: number;
  readonly eventLoopP50Ms: number;
  readonly eventLoopP99Ms: number;
  /** The fake provider's sleeps over the cell. */
  readonly slept: SleptTally;
  /** Mean sleep ÷ latency − 1, %; NaN at 0 ms. */
  readonly timerLatenessPct: number;
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
  /** Measured at 0 ms in every run: the ceilings the ideals fall back on. */
  readonly writeLimits: readonly BenchSystem[];
  /** Tables whose dead tuples are vacuumed away between cells. */
  readonly vacuumTables: readonly string[];
  readonly backlog: Backlog;
}

/** Something to do at the measured window's start and end (the profiler), beside the probe. */
export interface WindowHooks {
  open(): void;
  close(): void;
}

/**
 * Every (latency, system) cell, `runs` times, the systems interleaved within
 * each round so that drift (autovacuum, WAL, page cache, the neighbours on the
 * machine) spreads over all of them. The write limits run at 0 ms in every
 * round of the first latency (or in rounds of their own if 0 ms is not asked
 * for). Between cells the processed rows are put back, so every cell of a
 * round starts from the same backlog; before a round the backlog grows to what
 * its fastest system is expected to use, and a round in which a system still
 * ran dry is run again on a larger one.
 */
export async function measureThroughput(
  context: ThroughputContext,
  history: RateHistory,
): Promise<ThroughputCell[]> {
  const { options } = context;
  const cells = new Map<string, ThroughputCell>();
  const blocks: Array<{ latencyMs: number; systems: readonly BenchSystem[] }> =
    options.latencies.map((latencyMs) => ({
      latencyMs,
      systems: latencyMs === 0 ? [...context.writeLimits, ...context.systems] : context.systems,
    }));
  if (!options.latencies.includes(0))
    blocks.unshift({ latencyMs: 0, systems: context.writeLimits });
  for (const { latencyMs, systems } of blocks) {
    for (let run = 0; run < options.runs; run++) {
      const round = await runRound(
        context,
        history,
        systems,
        latencyMs,
        `run ${run + 1}/${options.runs}`,
      );
      for (const [system, result] of round) {
        const key = `${system.name}|${latencyMs}`;
        const cell = cells.get(key) ?? {
          system: system.name,
          latencyMs,
          callsInFlight: system.callsInFlight,
          runs: [],
        };
        cell.runs.push(result);
        cells.set(key, cell);
      }
    }
  }
  return [...cells.values()];
}

function cellPlan(options: BenchOptions, system: BenchSystem, latencyMs: number): CellPlan {
  const { warmupMs, windowMs } = cellWindow(
    latencyMs,
    options.warmupSeconds,
    options.windowSeconds,
  );
  return {
    latencyMs,
    warmupMs,
    windowMs,
    maxWindowMs: Math.max(windowMs, options.maxWindowSeconds * 1000),
    callsInFlight: system.callsInFlight,
  };
}

/**
 * One round (every system of it once, at one latency) on a backlog sized for
 * its fastest system; run again on a larger one while a system runs dry.
 */
export async function runRound(
  context: ThroughputContext,
  history: RateHistory,
  systems: readonly BenchSystem[],
  latencyMs: number,
  label: string,
  hooks?: WindowHooks,
): Promise<Array<[BenchSystem, CellRun]>> {
  const { options, backlog } = context;
  const need = (system: BenchSystem): number =>
    rowsNeeded(cellPlan(options, system, latencyMs), history.expected(system, latencyMs));
  for (let growths = 0; ; growths++) {
    await backlog.growTo(Math.max(...systems.map(need)));
    const last = growths >= MAX_GROWTHS;
    const round: Array<[BenchSystem, CellRun]> = [];
    let dry: BenchSystem | null = null;
    for (const system of systems) {
      const result = await runCell(context, system, latencyMs, hooks);
      history.record(system, latencyMs, result);
      round.push([system, result]);
      logCell(system, latencyMs, label, result);
      if (result.ranDry && !last) {
        dry = system;
        break;
      }
    }
    if (!dry) return round;
    // The round's cells must share one backlog: all of them run again on the larger one.
    progress(
      `${dry.name} ran dry on ${backlog.size} rows: the round runs again on a larger backlog`,
    );
    await backlog.growTo(Math.max(2 * backlog.size, need(dry)));
  }
}

function logCell(system: BenchSystem, latencyMs: number, label: string, result: CellRun): void {
  const c = result.connections;
  progress(
    `${system.name.padEnd(15)} ${String(latencyMs).padStart(4)} ms, ${label}: ` +
      `${result.rowsPerSec.toFixed(0).padStart(5)} rows/s over ${(result.windowMs / 1000).toFixed(1)} s (${result.calls} calls of ${result.backlog} due, ≤ ${result.maxInFlight} in flight; ` +
      `${result.cpuUsPerRow.toFixed(0)} µs CPU per row, event loop p50 ${result.eventLoopP50Ms.toFixed(1)} / p99 ${result.eventLoopP99Ms.toFixed(1)} ms; ` +
      `connections in use ${c.inUseMean.toFixed(1)} / ${c.inUseMax}, idle in tx ${c.idleInTransactionMean.toFixed(1)} / ${c.idleInTransactionMax}, open ≤ ${result.openMax}` +
      `${result.ranDry ? '; RAN DRY' : ''}; RSS ${rssMb()})`,
  );
}

async function runCell(
  context: ThroughputContext,
  system: BenchSystem,
  latencyMs: number,
  hooks?: WindowHooks,
): Promise<CellRun> {
  const { options, sampler, admin, backlog } = context;
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
  const probe = new WindowProbe();
  let windowOpen = false;
  const openWindow = setTimeout(
    () => {
      windowOpen = true;
      probe.open();
      hooks?.open();
    },
    Math.max(0, measureFrom - performance.now()),
  );
  let cost: WindowCost | null = null;
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
    // The window's cost is read before the stop: calls draining are not a steady stream.
    cost = probe.close();
    if (windowOpen) hooks?.close();
    ({ ranDry } = await withinTime(prepared.stop(), STOP_TIMEOUT_MS, `${system.name} stopping`));
  } finally {
    clearTimeout(openWindow);
    // A cell that failed must not leave a 1 ms timer running through the rest of the process.
    probe.close();
    samples = await sampler.stop();
  }
  const returned = [...fakeProvider.returned];
  const slept = { ...fakeProvider.slept };
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
  if (due !== backlog.size) {
    throw new Error(`after reset ${due} rows are due, expected ${backlog.size}`);
  }
  const rowsInWindow = returned.filter((t) => t >= measureFrom && t < measureTo).length;
  // Pushed as they return: the last is the latest (a spread of 100,000 values would not fit the stack).
  const lastReturn = returned.length > 0 ? returned[returned.length - 1] : Number.NaN;
  return {
    rowsPerSec: rateInWindow(returned, measureFrom, measureTo),
    calls: returned.length,
    rowsInWindow,
    maxInFlight,
    backlog: backlog.size,
    ranDry: ranDry || remainingDue === 0,
    paceRowsPerSec:
      lastReturn > started ? (returned.length * 1000) / (lastReturn - started) : Number.NaN,
    connections: connectionFigures(samples, measureFrom, measureTo),
    openMax: samples.length > 0 ? Math.max(...samples.map((s) => s.open)) : Number.NaN,
    windowMs: measureTo - measureFrom,
    cpuUs: cost?.cpuUs ?? Number.NaN,
    cpuUsPerRow: cost && rowsInWindow > 0 ? cost.cpuUs / rowsInWindow : Number.NaN,
    eventLoopP50Ms: cost?.eventLoopP50Ms ?? Number.NaN,
    eventLoopP99Ms: cost?.eventLoopP99Ms ?? Number.NaN,
    slept,
    timerLatenessPct: timerLatenessPercent(slept, latencyMs),
  };
}
