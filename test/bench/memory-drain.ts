/**
 * The memory drain, in a process of its own so that nothing of the harness
 * (the peers' modules, the other cells' garbage and heap growth) counts as
 * ours, and compiled to JavaScript first as a host deploys the library
 * (test/support/compiled-copy.ts): `node <copy>/test/bench/memory-drain.js <url> <rows>
 * <concurrency> <poolSize>`. Drains the rows already due in the database at
 * 0 ms, sampling memory after full collections: cold (the module started,
 * nothing sent), at every tenth of the rows sent (the first is the warm point:
 * the heap has grown to its working size) and at the end. Prints one JSON line
 * of MemoryDrainResult.
 */
import { sampleMemory, type MemorySample } from './memory';
import { fakeProvider } from './fake-provider';
import { drainWithCycles, startOurCycleApp } from './our-cycle';
import { BATCH_SIZE } from './ours-system';

const TENTHS = 10;

export interface MemoryDrainResult {
  readonly cold: MemorySample;
  readonly warm: MemorySample;
  readonly warmAfterRows: number;
  /** RSS in MB at each tenth of the drain, the warm point first: flat when nothing grows. */
  readonly tenthsRssMb: readonly number[];
  /** Heap used in MB at the same points: what a leak of ours would raise, tenth by tenth. */
  readonly tenthsHeapUsedMb: readonly number[];
  readonly after: MemorySample;
  readonly drainedRows: number;
  readonly rowsPerSec: number;
  readonly cycles: number;
}

async function main(): Promise<void> {
  const [url, rowsArg, concurrencyArg, poolArg] = process.argv.slice(2);
  const rows = Number(rowsArg);
  fakeProvider.latencyMs = 0;
  const app = await startOurCycleApp({
    url,
    poolSize: Number(poolArg),
    concurrency: Number(concurrencyArg),
    batchSize: BATCH_SIZE,
    drain: true,
  });
  try {
    const cold = sampleMemory();
    let sent = 0;
    const warm: { sample: MemorySample | null; rows: number } = { sample: null, rows: 0 };
    const tenthsRssMb: number[] = [];
    const tenthsHeapUsedMb: number[] = [];
    const record = (sample: MemorySample): void => {
      tenthsRssMb.push(sample.rssMb);
      tenthsHeapUsedMb.push(sample.heapUsedMb);
    };
    // Counted and let go, so the recorder's own array is no growth of ours.
    const poll = setInterval(() => {
      sent += fakeProvider.returned.length;
      fakeProvider.returned = [];
      if (sent < ((tenthsRssMb.length + 1) * rows) / TENTHS) return;
      const sample = sampleMemory();
      // A fast drain passes more than one tenth between two polls: each gets this sample.
      while (sent >= ((tenthsRssMb.length + 1) * rows) / TENTHS) record(sample);
      if (!warm.sample) {
        warm.sample = sample;
        warm.rows = sent;
      }
    }, 250);
    const drain = await drainWithCycles(app);
    clearInterval(poll);
    const after = sampleMemory();
    // The last tenth ends with the drain, usually between two polls.
    while (tenthsRssMb.length < TENTHS) record(after);
    const result: MemoryDrainResult = {
      cold,
      warm: warm.sample ?? cold,
      warmAfterRows: warm.rows,
      tenthsRssMb,
      tenthsHeapUsedMb,
      after,
      drainedRows: drain.processed,
      rowsPerSec: (drain.processed * 1000) / drain.elapsedMs,
      cycles: drain.cycles,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
