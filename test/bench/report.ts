import type { BenchOptions } from './bench-options';
import type { ClaimLatency } from './claim-latency';
import type { BenchEnvironment } from './environment';
import { fakeProvider } from './fake-provider';
import type { MemorySample } from './memory';
import { PgBossBench } from './pg-boss-runner';
import type { RoundTrips } from './round-trips';
import { median } from './stats';
import { BATCH_SIZE, type ThroughputCell } from './throughput';

export interface MemoryFigures {
  readonly before: MemorySample;
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
  readonly durationS: number;
  readonly throughput: readonly ThroughputCell[];
  readonly claim: readonly ClaimLatency[];
  readonly roundTrips: RoundTrips | null;
  readonly memory: MemoryFigures | null;
}

/** The markdown printed to stdout. */
export function renderReport(results: BenchResults): string {
  const { options, environment } = results;
  const lines: string[] = [];
  lines.push('## Notifications retry worker: benchmark', '');
  lines.push(`- Machine: ${environment.machine}`);
  lines.push(`- Node.js ${environment.node}`);
  lines.push(`- ${environment.postgres}`);
  lines.push(`- Packages: ${environment.packages}`);
  lines.push(`- Command: \`${results.command}\` (${results.durationS.toFixed(0)} s)`);
  lines.push(
    `- Backlog: ${options.rows} due rows (Failed, one channel, fake provider); every throughput cell starts from the full backlog and drains it or stops claiming after ${options.seconds} s; each figure is the median of ${options.runs} run${options.runs === 1 ? '' : 's'}`,
  );
  lines.push(
    `- Systems: **ours** = a Nest app context with \`NotificationsRetryModule\` (batch ${BATCH_SIZE}, with and without \`drain\`, schedule off, cycles run back to back, pool = concurrency + 5, the library's log lines counted but not written); ` +
      `**raw \`pg\` limit** = one dedicated connection per worker looping BEGIN / SELECT … FOR UPDATE SKIP LOCKED LIMIT 1 / provider / UPDATE / INSERT outbox / COMMIT (unnamed statements); ` +
      `**pg-boss** = concurrency × \`work()\` workers of ${PgBossBench.BATCH} jobs per fetch, handled one at a time, \`notifyWorker()\` after a full batch; ` +
      `**graphile-worker** = \`run()\` with its defaults and \`concurrency\`; both queues run the raw unit of work by id (BEGIN / SELECT … FOR UPDATE / provider / UPDATE / INSERT outbox / COMMIT) with one job per notification`,
  );
  const slept = options.latencies
    .filter((l) => l > 0)
    .map((l) => `${l} ms sleeps took ${fmt(fakeProvider.meanSleptMs(l), 1)} ms on average`);
  if (slept.length > 0) lines.push(`- Fake provider: ${slept.join('; ')}`);
  lines.push('');
  lines.push(...throughputTable(results));
  lines.push(...claimTable(results));
  lines.push(...roundTripTable(results));
  lines.push(...memoryTable(results));
  lines.push(...targetTable(results));
  return lines.join('\n');
}

const fmt = (value: number, digits = 0): string =>
  Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
const ratio = (a: number, b: number): string =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a';

function cellMedian(
  cells: readonly ThroughputCell[],
  system: string,
  latencyMs: number,
  concurrency: number,
): number {
  const cell = cells.find(
    (c) => c.system === system && c.latencyMs === latencyMs && c.concurrency === concurrency,
  );
  return cell ? median(cell.rowsPerSec) : Number.NaN;
}

function fasterQueue(
  cells: readonly ThroughputCell[],
  latencyMs: number,
  concurrency: number,
): number {
  const boss = cellMedian(cells, 'pg-boss', latencyMs, concurrency);
  const graphile = cellMedian(cells, 'graphile-worker', latencyMs, concurrency);
  const known = [boss, graphile].filter(Number.isFinite);
  return known.length > 0 ? Math.max(...known) : Number.NaN;
}

function throughputTable({ options, throughput }: BenchResults): string[] {
  if (throughput.length === 0) return [];
  const lines = [
    '### Throughput, rows/s',
    '',
    `| provider latency | concurrency | ours (drain) | ours (no drain) | raw \`pg\` limit | pg-boss | graphile-worker | ours / raw | ours / faster queue | ideal |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const latencyMs of options.latencies) {
    for (const concurrency of options.concurrencies) {
      const ours = cellMedian(throughput, 'ours', latencyMs, concurrency);
      const raw = cellMedian(throughput, 'raw', latencyMs, concurrency);
      lines.push(
        `| ${latencyMs} ms | ${concurrency} | ${fmt(ours)} | ${fmt(cellMedian(throughput, 'ours-no-drain', latencyMs, concurrency))} | ${fmt(raw)} | ` +
          `${fmt(cellMedian(throughput, 'pg-boss', latencyMs, concurrency))} | ${fmt(cellMedian(throughput, 'graphile-worker', latencyMs, concurrency))} | ` +
          `${ratio(ours, raw)} | ${ratio(ours, fasterQueue(throughput, latencyMs, concurrency))} | ${latencyMs > 0 ? fmt((concurrency * 1000) / latencyMs) : '–'} |`,
      );
    }
  }
  lines.push('');
  return lines;
}

function claimTable({ claim }: BenchResults): string[] {
  if (claim.length === 0) return [];
  const lines = [
    '### Claim latency (candidate scan, batch 200, wall clock with the round trip)',
    '',
    '| due rows | scan median | scan p95 | per-cycle `cycleSnapshot` median | end-of-cycle `countFailedBacklog` median |',
    '|---:|---:|---:|---:|---:|',
  ];
  for (const c of claim) {
    lines.push(
      `| ${c.dueRows} | ${fmt(c.scanMedianMs, 3)} ms | ${fmt(c.scanP95Ms, 3)} ms | ${fmt(c.snapshotMedianMs, 2)} ms | ${fmt(c.countBacklogMedianMs, 2)} ms |`,
    );
  }
  if (claim.length > 1) {
    const first = claim[0];
    const last = claim[claim.length - 1];
    lines.push(
      `| ratio ${last.dueRows} / ${first.dueRows} | ${ratio(last.scanMedianMs, first.scanMedianMs)} | ${ratio(last.scanP95Ms, first.scanP95Ms)} | ${ratio(last.snapshotMedianMs, first.snapshotMedianMs)} | ${ratio(last.countBacklogMedianMs, first.countBacklogMedianMs)} |`,
    );
  }
  lines.push('');
  return lines;
}

function roundTripTable({ roundTrips }: BenchResults): string[] {
  if (!roundTrips) return [];
  const lines = [
    '### SQL round trips (statements sent, library defaults)',
    '',
    '| | statements |',
    '|---|---:|',
    `| empty cycle (nothing due) | ${roundTrips.emptyCycle} |`,
    `| cycle processing one row | ${roundTrips.oneRowCycle} |`,
    `| cycle processing two rows | ${roundTrips.twoRowCycle} |`,
    `| per row (two rows − one row) | ${roundTrips.twoRowCycle - roundTrips.oneRowCycle} |`,
    `| hand-written unit of work, per row | ${roundTrips.rawPerRow} |`,
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
  return lines;
}

function memoryTable({ memory }: BenchResults): string[] {
  if (!memory) return [];
  return [
    `### Memory: draining ${memory.drainedRows} rows (ours, drain mode, batch ${BATCH_SIZE}, concurrency ${memory.concurrency}, 0 ms; ${fmt(memory.rowsPerSec)} rows/s over ${memory.cycles} cycles)`,
    '',
    '| | RSS | heap used |',
    '|---|---:|---:|',
    `| before | ${fmt(memory.before.rssMb, 1)} MB | ${fmt(memory.before.heapUsedMb, 1)} MB |`,
    `| after | ${fmt(memory.after.rssMb, 1)} MB | ${fmt(memory.after.heapUsedMb, 1)} MB |`,
    `| growth | ${fmt(memory.after.rssMb - memory.before.rssMb, 1)} MB | ${fmt(memory.after.heapUsedMb - memory.before.heapUsedMb, 1)} MB |`,
    '',
  ];
}

function targetTable(results: BenchResults): string[] {
  const { options, throughput, claim, roundTrips, memory } = results;
  const rows: string[] = [];
  const verdict = (ok: boolean | null): string => (ok === null ? 'n/a' : ok ? 'met' : 'missed');

  if (options.latencies.includes(0)) {
    const ratios = options.concurrencies.map((c) => ({
      c,
      r: cellMedian(throughput, 'ours', 0, c) / cellMedian(throughput, 'raw', 0, c),
    }));
    const known = ratios.filter((x) => Number.isFinite(x.r));
    if (known.length > 0) {
      rows.push(
        `| zero-latency drain ≥ 80 % of the raw limit | ${known.map((x) => `c=${x.c}: ${fmt(x.r * 100)} %`).join(', ')} | ${verdict(known.every((x) => x.r >= 0.8))} |`,
      );
    }
  }
  const ours20 = cellMedian(throughput, 'ours', 20, 16);
  if (Number.isFinite(ours20)) {
    rows.push(
      `| 20 ms provider, concurrency 16 ≥ 90 % of 800 rows/s | ${fmt(ours20)} rows/s = ${fmt((ours20 / 800) * 100)} % | ${verdict(ours20 >= 720)} |`,
    );
  }
  const queueRatios = options.latencies.flatMap((l) =>
    options.concurrencies.map((c) => ({
      l,
      c,
      r: cellMedian(throughput, 'ours', l, c) / fasterQueue(throughput, l, c),
    })),
  );
  const knownQueue = queueRatios.filter((x) => Number.isFinite(x.r));
  if (knownQueue.length > 0) {
    const worst = knownQueue.reduce((a, b) => (b.r < a.r ? b : a));
    rows.push(
      `| ≥ 1.0× the faster of pg-boss and graphile-worker | lowest ${fmt(worst.r, 2)}× (${worst.l} ms, c=${worst.c}) | ${verdict(knownQueue.every((x) => x.r >= 1))} |`,
    );
  }
  if (claim.length > 1) {
    const first = claim[0];
    const last = claim[claim.length - 1];
    const r = last.scanMedianMs / first.scanMedianMs;
    rows.push(
      `| claim latency at ${last.dueRows} ≤ 1.2× that at ${first.dueRows} | median ${fmt(r, 2)}×, p95 ${fmt(last.scanP95Ms / first.scanP95Ms, 2)}× | ${verdict(r <= 1.2)} |`,
    );
  }
  if (roundTrips) {
    rows.push(
      `| empty cycle ≤ 4 round trips | ${roundTrips.emptyCycle} | ${verdict(roundTrips.emptyCycle <= 4)} |`,
    );
  }
  if (memory) {
    const growth = memory.after.rssMb - memory.before.rssMb;
    rows.push(
      `| RSS growth over a 1M drain < 50 MB | ${fmt(growth, 1)} MB over ${memory.drainedRows} rows | ${memory.drainedRows >= 1_000_000 ? verdict(growth < 50) : `${verdict(growth < 50)} at this size`} |`,
    );
  }
  if (rows.length === 0) return [];
  return ['### Targets (issue 5)', '', '| target | measured | |', '|---|---|---|', ...rows, ''];
}
