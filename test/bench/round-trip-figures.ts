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
import { sendNotificationJob, type WithPgClient } from './peer-job';
import { writeSent } from './unit-of-work';

/**
 * Counts the statements our cycle sends with nothing due, one and two due rows
 * (library defaults: batch 200, concurrency 4, no drain; pg's default pool of 10), and those of a
 * peer's job body for one row (without the queue's fetch and completion), on a scratch database of
 * its own.
 */
export async function measureRoundTrips(serverUrl: string, runs: number): Promise<RoundTrips> {
  const db = await createMigratedScratchDatabase(serverUrl, 'roundtrips');
  try {
    await withClient(db.url, insertBenchChannel);
    const app = await startOurCycleApp({
      url: db.url,
      poolSize: 10,
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

    const peer: number[] = [];
    const writeLimit: number[] = [];
    // A client of its own, ended (and awaited) before the database is dropped.
    const client = new Client({ connectionString: db.url });
    await client.connect();
    const withPgClient: WithPgClient = (work) => work(client);
    const dueId = async (): Promise<string> => {
      await loadDueRows(client, 1);
      const { rows } = await client.query<{ id: string }>(
        `SELECT id FROM notifications WHERE channel = $1 AND due_at <= now()`,
        [BENCH_CHANNEL],
      );
      return rows[0].id;
    };
    try {
      for (let run = 0; run < runs; run++) {
        const peerRow = await dueId();
        const counter = QueryCounter.start();
        const sent = await sendNotificationJob(withPgClient, peerRow, 'round-trips');
        counter.stop();
        if (!sent) throw new Error('the peer job body did not send its row');
        peer.push(counter.count);

        const writeRow = await dueId();
        const writeCounter = QueryCounter.start();
        const written = await writeSent(client, writeRow, 'round-trips');
        writeCounter.stop();
        if (!written) throw new Error("the write limit's statement did not write its row");
        writeLimit.push(writeCounter.count);
      }
    } finally {
      await client.end();
    }
    const result = {
      emptyCycle: median(empty),
      oneRowCycle: median(oneRow),
      twoRowCycle: median(twoRows),
      peerJobPerRow: median(peer),
      writeLimitPerRow: median(writeLimit),
      oneRowStatements,
    };
    progress(
      `round trips: empty cycle ${result.emptyCycle}, one row ${result.oneRowCycle}, two rows ${result.twoRowCycle}, peer job body ${result.peerJobPerRow}`,
    );
    return result;
  } finally {
    await db.drop();
  }
}
