import { Client } from 'pg';
import {
  BENCH_CHANNEL,
  createMigratedScratchDatabase,
  insertBenchChannel,
  loadDueRows,
  withClient,
} from './bench-database';
import { startOurCycleApp } from './our-cycle';
import { progress } from './progress';
import { QueryCounter, type RoundTrips } from './round-trips';
import { median } from './stats';
import { processNextDue } from './unit-of-work';

/**
 * Counts the statements our cycle sends with nothing due, one and two due rows
 * (library defaults: batch 200, concurrency 4, no drain), and those of the
 * hand-written unit of work, on a scratch database of its own.
 */
export async function measureRoundTrips(serverUrl: string, runs: number): Promise<RoundTrips> {
  const db = await createMigratedScratchDatabase(serverUrl, 'roundtrips');
  try {
    await withClient(db.url, insertBenchChannel);
    const app = await startOurCycleApp({
      url: db.url,
      concurrency: 4,
      batchSize: 200,
      drain: false,
    });
    const empty: number[] = [];
    const oneRow: number[] = [];
    const twoRows: number[] = [];
    let oneRowStatements: string[] = [];
    try {
      await app.cycles.runCycle(); // warm-up: the pool opens its connections
      for (let run = 0; run < runs; run++) {
        const counter = QueryCounter.start();
        await app.cycles.runCycle();
        counter.stop();
        empty.push(counter.count);
      }
      const cycleWith = async (rows: number): Promise<string[]> => {
        await withClient(db.url, (client) => loadDueRows(client, rows));
        const counter = QueryCounter.start();
        const report = await app.cycles.runCycle();
        counter.stop();
        if (report.status !== 'completed' || report.counts.processed !== rows) {
          throw new Error(`expected ${rows} processed rows, got ${JSON.stringify(report)}`);
        }
        return counter.statements;
      };
      for (let run = 0; run < runs; run++) {
        oneRowStatements = await cycleWith(1);
        oneRow.push(oneRowStatements.length);
        twoRows.push((await cycleWith(2)).length);
      }
    } finally {
      await app.close();
    }

    const raw: number[] = [];
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      for (let run = 0; run < runs; run++) {
        await loadDueRows(client, 1);
        const counter = QueryCounter.start();
        const processed = await processNextDue(client);
        counter.stop();
        if (!processed) throw new Error(`no due row in ${BENCH_CHANNEL} for the raw unit of work`);
        raw.push(counter.count);
      }
    } finally {
      await client.end();
    }
    const result = {
      emptyCycle: median(empty),
      oneRowCycle: median(oneRow),
      twoRowCycle: median(twoRows),
      rawPerRow: median(raw),
      oneRowStatements,
    };
    progress(
      `round trips: empty cycle ${result.emptyCycle}, one row ${result.oneRowCycle}, two rows ${result.twoRowCycle}, raw row ${result.rawPerRow}`,
    );
    return result;
  } finally {
    await db.drop();
  }
}
