import type { BenchOptions } from './bench-options';
import type { BenchSystem } from './bench-system';
import { cellWindow } from './cell-window';
import type { ClaimLatency } from './claim-latency';
import type { BenchEnvironment } from './environment';
import { fakeProvider } from './fake-provider';
import type { MemorySample } from './memory';
import { BATCH_SIZE } from './ours-system';
import type { RoundTrips } from './round-trips';
import { median } from './stats';
import { MIN_WAVES, type CellRun, type ThroughputCell } from './throughput';

export interface MemoryFigures {
  /** The module started, nothing sent yet. */
  readonly cold: MemorySample;
  /** After `warmAfterRows` (a tenth of the drain): the heap at its working size. */
  readonly warm: MemorySample;
  readonly warmAfterRows: number;
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
  /** The write limit first, then the systems of `--systems`. */
  readonly systems: readonly BenchSystem[];
  readonly throughput: readonly ThroughputCell[];
  readonly claim: readonly ClaimLatency[];
  readonly roundTrips: RoundTrips | null;
  readonly memory: MemoryFigures | null;
}

const LABELS: Record<BenchSystem['name'], string> = {
  'write-limit': 'per-row write limit (`pg`)',
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
    `- Cells: ${options.rows} due rows (Failed, one channel) at the start of every cell; a cell warms up, then is measured over its window (warm-up + window: ${windows}; a window grows to span ${MIN_WAVES} waves of calls, most calls in flight ÷ rows/s, up to ${options.maxWindowSeconds} s), then stops and lets its calls finish; rows/s is the least-squares slope of the provider's returns over the window, every one of them checked committed (row Sent, attempt counted, one outbox event); each figure is the median of ${options.runs} run${options.runs === 1 ? '' : 's'} (min–max)`,
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
    .map((l) => `${l} ms sleeps took ${fmt(fakeProvider.meanSleptMs(l), 1)} ms on average`);
  if (slept.length > 0) lines.push(`- Fake provider: ${slept.join('; ')}`);
  lines.push('');
  lines.push(...throughputTable(results));
  lines.push(...summaryTable(results));
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

/** min(calls in flight ÷ latency, the per-row write limit of this run). */
function ideal(cells: readonly ThroughputCell[], callsInFlight: number, latencyMs: number): number {
  const writeLimit = cellMedian(findCell(cells, 'write-limit', 0));
  return latencyMs === 0 ? writeLimit : Math.min((callsInFlight * 1000) / latencyMs, writeLimit);
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
    '| provider latency | system | calls in flight | rows/s: median (min–max) | ideal | share of ideal | connections in use: mean / max | idle in transaction: mean / max | open, max |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const writeLimit = findCell(throughput, 'write-limit', 0);
  if (writeLimit) {
    lines.push(
      `| 0 ms | ${LABELS['write-limit']} | ${writeLimit.callsInFlight} | ${figure(writeLimit)} | – | – | ${connectionColumns(writeLimit.runs).join(' | ')} |`,
    );
  }
  for (const latencyMs of options.latencies) {
    for (const system of systems) {
      if (system.name === 'write-limit') continue;
      const cell = findCell(throughput, system.name, latencyMs);
      if (!cell) continue;
      const best = ideal(throughput, cell.callsInFlight, latencyMs);
      lines.push(
        `| ${latencyMs} ms | ${LABELS[system.name]} | ${cell.callsInFlight} | ${figure(cell)} | ${fmt(best)} | ${percent(cellMedian(cell), best)} | ${connectionColumns(cell.runs).join(' | ')} |`,
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
    `| provider latency | ours (${ours.callsInFlight} in flight) | best peer | ours / best | ours' ideal |`,
    '|---:|---:|---|---:|---:|',
  ];
  for (const latencyMs of options.latencies) {
    const oursRate = cellMedian(findCell(throughput, 'ours', latencyMs));
    const best = peers
      .map((peer) => ({ peer, rate: cellMedian(findCell(throughput, peer.name, latencyMs)) }))
      .filter((p) => Number.isFinite(p.rate))
      .reduce<{ peer: BenchSystem; rate: number } | null>(
        (a, b) => (a === null || b.rate > a.rate ? b : a),
        null,
      );
    lines.push(
      `| ${latencyMs} ms | ${fmt(oursRate)} | ${best ? `${fmt(best.rate)} (${LABELS[best.peer.name]})` : 'n/a'} | ${best ? ratio(oursRate, best.rate) : 'n/a'} | ${fmt(ideal(throughput, ours.callsInFlight, latencyMs))} |`,
    );
  }
  lines.push('');
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
    `| ${label} | ${fmt(m.rssMb, 1)} MB | ${fmt(m.heapUsedMb, 1)} MB |`;
  const growth = (label: string, from: MemorySample): string =>
    `| ${label} | ${fmt(memory.after.rssMb - from.rssMb, 1)} MB | ${fmt(memory.after.heapUsedMb - from.heapUsedMb, 1)} MB |`;
  return [
    `### Memory: draining ${memory.drainedRows} rows (ours in a process of its own, drain mode, batch ${BATCH_SIZE}, concurrency ${memory.concurrency}, 0 ms; ${fmt(memory.rowsPerSec)} rows/s over ${memory.cycles} cycles; after full collections)`,
    '',
    '| | RSS | heap used |',
    '|---|---:|---:|',
    row('cold (module started, nothing sent)', memory.cold),
    row(`warm (after ${memory.warmAfterRows} rows)`, memory.warm),
    row('after the drain', memory.after),
    growth('growth over the drain, from warm', memory.warm),
    growth('growth from cold', memory.cold),
    '',
  ];
}
