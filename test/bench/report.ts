import type { BenchOptions } from './bench-options';
import type { BenchSystem } from './bench-system';
import { cellWindow, MIN_WAVES } from './cell-window';
import type { ClaimLatency } from './claim-latency';
import type { BenchEnvironment } from './environment';
import type { MemorySample } from './memory';
import { BATCH_SIZE } from './ours-system';
import { CATEGORIES } from './profile-categories';
import type { ProfiledCell } from './profiled-cell';
import type { RoundTrips } from './round-trips';
import { median } from './stats';
import type { CellRun, ThroughputCell } from './throughput';

export interface MemoryFigures {
  /** The module started, nothing sent yet. */
  readonly cold: MemorySample;
  /** After `warmAfterRows` (a tenth of the drain): the heap at its working size. */
  readonly warm: MemorySample;
  readonly warmAfterRows: number;
  /** RSS at each tenth of the drain, the warm point first. */
  readonly tenthsRssMb: readonly number[];
  /** Heap used at the same points. */
  readonly tenthsHeapUsedMb: readonly number[];
  readonly after: MemorySample;
  readonly drainedRows: number;
  readonly rowsPerSec: number;
  readonly cycles: number;
  readonly concurrency: number;
}

export interface BenchResults {
  readonly options: BenchOptions;
  readonly command: string;
  readonly environment: BenchEnvironment;
  /** `os.loadavg()` when the run started: 1, 5 and 15 minutes. */
  readonly loadAtStart: readonly number[];
  readonly durationS: number;
  /** The write limits first, then the systems of `--systems`. */
  readonly systems: readonly BenchSystem[];
  readonly throughput: readonly ThroughputCell[];
  /** Ours at 0 ms once more under the CPU profiler, after the rounds; null without ours. */
  readonly profile: ProfiledCell | null;
  readonly claim: readonly ClaimLatency[];
  readonly roundTrips: RoundTrips | null;
  readonly memory: MemoryFigures | null;
}

const LABELS: Record<BenchSystem['name'], string> = {
  'write-limit': 'per-row write limit (`pg`)',
  'set-write-limit': 'set-based write limit (`pg`)',
  ours: 'ours',
  'pg-boss': 'pg-boss',
  'graphile-worker': 'graphile-worker',
};

/** The markdown printed to stdout. */
export function renderReport(results: BenchResults): string {
  const { options, environment } = results;
  const lines: string[] = [];
  lines.push('## Notifications retry worker: benchmark', '');
  lines.push(`- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  lines.push(
    `- Machine: ${environment.machine}; load average at start ${results.loadAtStart.map((l) => l.toFixed(2)).join(' / ')} (1 / 5 / 15 min)`,
  );
  lines.push(`- Commit: ${environment.commit}`);
  lines.push(`- Node.js ${environment.node}`);
  lines.push(`- ${environment.postgres}`);
  lines.push(`- Packages: ${environment.packages}`);
  lines.push(`- Command: \`${results.command}\` (${results.durationS.toFixed(0)} s)`);
  const windows = options.latencies
    .map((l) => {
      const w = cellWindow(l, options.warmupSeconds, options.windowSeconds);
      return `${l} ms: ${fmt(w.warmupMs / 1000, 1)} s + ${fmt(w.windowMs / 1000, 1)} s`;
    })
    .join(', ');
  lines.push(
    `- Cells: at least ${options.rows} due rows (Failed, one channel) at the start of every cell, more where a system would use them up (the backlog column: before a round the backlog grows to what its fastest system is expected to use, and a round in which one ran dry is run again on a larger one; every cell of a round starts from the same backlog); a cell warms up, then is measured over its window (warm-up + window: ${windows}; a window grows to span ${MIN_WAVES} waves of calls, most calls in flight ÷ rows/s, up to ${options.maxWindowSeconds} s), then stops and lets its calls finish; rows/s is the least-squares slope of the provider's returns over the window, every one of them checked committed (row Sent, attempt counted, one outbox event); each figure is the median of ${options.runs} run${options.runs === 1 ? '' : 's'} (min–max)`,
  );
  lines.push(
    `- Connection budget: ${options.budget} per system, every pool it opens added up (the queue's own included)`,
  );
  for (const system of results.systems) {
    const notes = system.notes();
    lines.push(
      `- **${LABELS[system.name]}**: ${system.description}${notes.length > 0 ? `. Note: ${notes.join('; ')}` : ''}`,
    );
  }
  const slept = options.latencies
    .filter((l) => l > 0)
    .map((l) => {
      const runs = results.throughput.filter((c) => c.latencyMs === l).flatMap((c) => c.runs);
      const totalMs = runs.reduce((sum, r) => sum + r.slept.totalMs, 0);
      const count = runs.reduce((sum, r) => sum + r.slept.count, 0);
      return `${l} ms sleeps took ${fmt(count > 0 ? totalMs / count : Number.NaN, 1)} ms on average (every system's cells; per cell in the timer lateness column)`;
    });
  if (slept.length > 0) lines.push(`- Fake provider: ${slept.join('; ')}`);
  lines.push('');
  lines.push(...throughputTable(results));
  lines.push(...summaryTable(results));
  lines.push(...profileTable(results));
  lines.push(...claimTable(results));
  lines.push(...roundTripTable(results));
  lines.push(...memoryTable(results));
  return lines.join('\n');
}

const fmt = (value: number, digits = 0): string =>
  Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
const ratio = (a: number, b: number): string =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a';
const percent = (a: number, b: number): string =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${((a / b) * 100).toFixed(0)} %` : 'n/a';

function rates(cell: ThroughputCell | undefined): number[] {
  return cell ? cell.runs.map((r) => r.rowsPerSec).filter(Number.isFinite) : [];
}

function cellMedian(cell: ThroughputCell | undefined): number {
  return median(rates(cell));
}

function findCell(
  cells: readonly ThroughputCell[],
  system: BenchSystem['name'],
  latencyMs: number,
): ThroughputCell | undefined {
  return cells.find((c) => c.system === system && c.latencyMs === latencyMs);
}

/**
 * At 0 ms the write limit of the system's way of writing: the set-based one for
 * ours (its outcomes are group-committed), the per-row one for the peers (a
 * transaction per job). At a latency, min(calls in flight ÷ latency, the
 * system's own 0 ms rate in this run): with the provider's wait taken away it
 * goes no faster than at 0 ms. Without a 0 ms cell of the system, its write
 * limit stands in.
 */
function ideal(
  cells: readonly ThroughputCell[],
  system: BenchSystem['name'],
  callsInFlight: number,
  latencyMs: number,
): number {
  const writeLimit = cellMedian(
    findCell(cells, system === 'ours' ? 'set-write-limit' : 'write-limit', 0),
  );
  if (latencyMs === 0) return writeLimit;
  const atZero = cellMedian(findCell(cells, system, 0));
  const cap = Number.isFinite(atZero) ? atZero : writeLimit;
  return Math.min((callsInFlight * 1000) / latencyMs, cap);
}

function backlogColumn(runs: readonly CellRun[]): string {
  const sizes = runs.map((r) => r.backlog);
  const low = Math.min(...sizes);
  const high = Math.max(...sizes);
  return low === high ? `${low}` : `${low}–${high}`;
}

/** CPU µs per row, event-loop lag p50 / p99 and timer lateness: medians over the runs. */
function costColumns(runs: readonly CellRun[], latencyMs: number): string[] {
  const mid = (pick: (r: CellRun) => number): number =>
    median(runs.map(pick).filter(Number.isFinite));
  const lateness = mid((r) => r.timerLatenessPct);
  return [
    fmt(mid((r) => r.cpuUsPerRow)),
    `${fmt(
      mid((r) => r.eventLoopP50Ms),
      1,
    )} / ${fmt(
      mid((r) => r.eventLoopP99Ms),
      1,
    )}`,
    latencyMs === 0 ? '–' : Number.isFinite(lateness) ? `${fmt(lateness, 1)} %` : 'n/a',
  ];
}

function figure(cell: ThroughputCell): string {
  const values = rates(cell);
  if (values.length === 0) return 'n/a';
  const dry = cell.runs.some((r) => r.ranDry) ? ' (ran dry)' : '';
  if (values.length === 1) return `${fmt(values[0])}${dry}`;
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})${dry}`;
}

function connectionColumns(runs: readonly CellRun[]): string[] {
  const mean = (pick: (r: CellRun) => number): string => fmt(median(runs.map(pick)), 1);
  const max = (pick: (r: CellRun) => number): string => fmt(Math.max(...runs.map(pick)));
  return [
    `${mean((r) => r.connections.inUseMean)} / ${max((r) => r.connections.inUseMax)}`,
    `${mean((r) => r.connections.idleInTransactionMean)} / ${max((r) => r.connections.idleInTransactionMax)}`,
    max((r) => r.openMax),
  ];
}

function throughputTable({ options, throughput, systems }: BenchResults): string[] {
  if (throughput.length === 0) return [];
  const lines = [
    `### Throughput on a budget of ${options.budget} connections`,
    '',
    '| provider latency | system | calls in flight | backlog at start | rows/s: median (min–max) | ideal | share of ideal | CPU µs per row | event-loop lag p50 / p99, ms | timer lateness | connections in use: mean / max | idle in transaction: mean / max | open, max |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const name of ['write-limit', 'set-write-limit'] as const) {
    const limit = findCell(throughput, name, 0);
    if (!limit) continue;
    lines.push(
      `| 0 ms | ${LABELS[name]} | ${limit.callsInFlight} | ${backlogColumn(limit.runs)} | ${figure(limit)} | – | – | ${costColumns(limit.runs, 0).join(' | ')} | ${connectionColumns(limit.runs).join(' | ')} |`,
    );
  }
  for (const latencyMs of options.latencies) {
    for (const system of systems) {
      if (system.name === 'write-limit' || system.name === 'set-write-limit') continue;
      const cell = findCell(throughput, system.name, latencyMs);
      if (!cell) continue;
      const best = ideal(throughput, system.name, cell.callsInFlight, latencyMs);
      lines.push(
        `| ${latencyMs} ms | ${LABELS[system.name]} | ${cell.callsInFlight} | ${backlogColumn(cell.runs)} | ${figure(cell)} | ${fmt(best)} | ${percent(cellMedian(cell), best)} | ${costColumns(cell.runs, latencyMs).join(' | ')} | ${connectionColumns(cell.runs).join(' | ')} |`,
      );
    }
  }
  lines.push('');
  return lines;
}

function summaryTable({ options, throughput, systems }: BenchResults): string[] {
  const peers = systems.filter((s) => s.name === 'pg-boss' || s.name === 'graphile-worker');
  const ours = systems.find((s) => s.name === 'ours');
  if (!ours || peers.length === 0) return [];
  const lines = [
    '### Ours against the best peer',
    '',
    `| provider latency | ours (${ours.callsInFlight} in flight) | best peer | ours / best | ours' ideal | ours / ideal |`,
    '|---:|---:|---|---:|---:|---:|',
  ];
  for (const latencyMs of options.latencies) {
    const oursRate = cellMedian(findCell(throughput, 'ours', latencyMs));
    const oursIdeal = ideal(throughput, 'ours', ours.callsInFlight, latencyMs);
    const best = peers
      .map((peer) => ({ peer, rate: cellMedian(findCell(throughput, peer.name, latencyMs)) }))
      .filter((p) => Number.isFinite(p.rate))
      .reduce<{ peer: BenchSystem; rate: number } | null>(
        (a, b) => (a === null || b.rate > a.rate ? b : a),
        null,
      );
    lines.push(
      `| ${latencyMs} ms | ${fmt(oursRate)} | ${best ? `${fmt(best.rate)} (${LABELS[best.peer.name]})` : 'n/a'} | ${best ? ratio(oursRate, best.rate) : 'n/a'} | ${fmt(oursIdeal)} | ${percent(oursRate, oursIdeal)} |`,
    );
  }
  lines.push('');
  if (options.latencies.includes(0)) {
    lines.push(
      `At 0 ms ours' ideal is the set-based write limit: ours / ideal there is its share of it (${percent(cellMedian(findCell(throughput, 'ours', 0)), cellMedian(findCell(throughput, 'set-write-limit', 0)))}).`,
      '',
    );
  }
  return lines;
}

function profileTable({ profile }: BenchResults): string[] {
  if (!profile) return [];
  const { run, breakdown } = profile;
  const idle = breakdown.samples.get('idle') ?? 0;
  const busy = breakdown.total - idle;
  const usPerRow = (samples: number): number =>
    busy > 0 && run.rowsInWindow > 0
      ? ((samples / busy) * run.cpuUs) / run.rowsInWindow
      : Number.NaN;
  const lines = [
    `### Where ${LABELS[profile.system]}' CPU goes at 0 ms (one more cell under V8's sampling profiler, not in the figures)`,
    '',
    `${fmt(run.rowsPerSec)} rows/s over a ${fmt(run.windowMs / 1000, 1)} s window from a backlog of ${run.backlog} (the profiler on, sampling every ${profile.samplingIntervalUs} µs): ${breakdown.total} samples, ${percent(busy, breakdown.total)} of them busy; process CPU ${fmt(run.cpuUsPerRow)} µs per row. A sample is classed by its stack, leaf first: the first frame a rule names (test/bench/profile-categories.ts). µs per row is the part's share of the busy samples × the process CPU of the window ÷ its rows, so the parts add up to the CPU per row (the process's other threads, GC helpers among them, are spread over the parts).`,
    '',
    "| part | share of the window's samples | µs per row |",
    '|---|---:|---:|',
  ];
  for (const category of CATEGORIES) {
    const samples = breakdown.samples.get(category) ?? 0;
    lines.push(
      `| ${category} | ${percent(samples, breakdown.total)} | ${category === 'idle' ? '–' : fmt(usPerRow(samples), 1)} |`,
    );
  }
  lines.push(`| all busy | ${percent(busy, breakdown.total)} | ${fmt(usPerRow(busy), 1)} |`, '');
  return lines;
}

function claimTable({ claim }: BenchResults): string[] {
  if (claim.length === 0) return [];
  const lines = [
    `### Claim latency (the claim statement of ${BATCH_SIZE} rows, wall clock with the round trip)`,
    '',
    "| due rows | claim median | claim p95 | buffers: the scan / the whole claim | off the claim path: excluded channels' due rows (capped count) median | failed backlog (capped count) median |",
    '|---|---:|---:|---:|---:|---:|',
  ];
  const label = (c: ClaimLatency): string =>
    c.excludedAtHead > 0
      ? `${c.dueRows} + ${c.excludedAtHead} of a disabled channel at the head`
      : `${c.dueRows}`;
  for (const c of claim) {
    lines.push(
      `| ${label(c)} | ${fmt(c.claimMedianMs, 3)} ms | ${fmt(c.claimP95Ms, 3)} ms | ${c.claimScanBuffers} / ${c.claimBuffers} | ${fmt(c.waitingCountMedianMs, 2)} ms | ${fmt(c.backlogCountMedianMs, 2)} ms |`,
    );
  }
  const first = claim[0];
  for (const c of claim.slice(1)) {
    lines.push(
      `| ratio (${label(c)}) / ${first.dueRows} | ${ratio(c.claimMedianMs, first.claimMedianMs)} | ${ratio(c.claimP95Ms, first.claimP95Ms)} | ${ratio(c.claimScanBuffers, first.claimScanBuffers)} / ${ratio(c.claimBuffers, first.claimBuffers)} | ${ratio(c.waitingCountMedianMs, first.waitingCountMedianMs)} | ${ratio(c.backlogCountMedianMs, first.backlogCountMedianMs)} |`,
    );
  }
  lines.push('');
  return lines;
}

function roundTripTable({ roundTrips }: BenchResults): string[] {
  if (!roundTrips) return [];
  return [
    '### SQL round trips (statements sent, library defaults)',
    '',
    '| | statements |',
    '|---|---:|',
    `| empty cycle (nothing due) | ${roundTrips.emptyCycle} |`,
    `| cycle processing one row | ${roundTrips.oneRowCycle} |`,
    `| cycle processing two rows | ${roundTrips.twoRowCycle} |`,
    `| per row (two rows − one row) | ${roundTrips.twoRowCycle - roundTrips.oneRowCycle} |`,
    `| a peer's job body, per row (read; BEGIN / UPDATE / INSERT outbox / COMMIT; the queue's fetch and completion come on top, shared by a batch) | ${roundTrips.peerJobPerRow} |`,
    `| the write limit, per row (one autocommit statement) | ${roundTrips.writeLimitPerRow} |`,
    '',
    '<details><summary>Statements of the one-row cycle</summary>',
    '',
    ...roundTrips.oneRowStatements.map(
      (s, i) => `${i + 1}. \`${s.length > 110 ? `${s.slice(0, 107)}...` : s}\``,
    ),
    '',
    '</details>',
    '',
  ];
}

function memoryTable({ memory }: BenchResults): string[] {
  if (!memory) return [];
  const row = (label: string, m: MemorySample): string =>
    `| ${label} | ${fmt(m.rssMb, 1)} MB | ${fmt(m.heapUsedMb, 1)} MB | ${fmt(m.heapTotalMb, 1)} MB | ${fmt(m.externalMb, 1)} MB |`;
  const growth = (label: string, from: MemorySample): string => {
    const { after } = memory;
    return `| ${label} | ${fmt(after.rssMb - from.rssMb, 1)} MB | ${fmt(after.heapUsedMb - from.heapUsedMb, 1)} MB | ${fmt(after.heapTotalMb - from.heapTotalMb, 1)} MB | ${fmt(after.externalMb - from.externalMb, 1)} MB |`;
  };
  return [
    `### Memory: draining ${memory.drainedRows} rows (ours compiled to JavaScript, in a process of its own, drain mode, batch ${BATCH_SIZE}, concurrency ${memory.concurrency}, 0 ms; ${fmt(memory.rowsPerSec)} rows/s over ${memory.cycles} cycles; after full collections)`,
    '',
    '| | RSS | heap used | heap total | external |',
    '|---|---:|---:|---:|---:|',
    row('cold (module started, nothing sent)', memory.cold),
    row(`warm (after ${memory.warmAfterRows} rows)`, memory.warm),
    row('after the drain', memory.after),
    growth('growth over the drain, from warm', memory.warm),
    growth('growth from cold', memory.cold),
    '',
    `RSS at each tenth of the drain, from the warm point: ${memory.tenthsRssMb.map((mb) => fmt(mb, 1)).join(' → ')} MB.`,
    '',
    `Heap used at the same points: ${memory.tenthsHeapUsedMb.map((mb) => fmt(mb, 1)).join(' → ')} MB.`,
    '',
  ];
}
