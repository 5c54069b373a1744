import { completed } from './support/cycle-reports';
import { outboxEvents } from './support/fixtures';
import { useRetryTestApp } from './support/retry-test-app';

const CALLS = 200;
const LATENCY_MS = 300;

/**
 * DESIGN §3: no database connection is held while a provider is called. With
 * 200 calls of 300 ms in flight on a pool of 20, pg_stat_activity is sampled
 * during the calls: not one backend of the app's database is idle in
 * transaction (or busy at all) for the worker.
 */
describe('no connection held across provider calls (real PostgreSQL)', () => {
  const t = useRetryTestApp({ options: { concurrency: CALLS }, poolSize: 20 });

  it(`keeps 0 connections idle in transaction while ${CALLS} calls of ${LATENCY_MS} ms are in flight`, async () => {
    const ids = await t.dueRows(CALLS);
    let inFlight = 0;
    t.app.provider.respondWith(async (message) => {
      inFlight++;
      await new Promise((r) => setTimeout(r, LATENCY_MS));
      inFlight--;
      return { providerMessageId: `p-${message.id}` };
    });
    // Sampled on the app's own database; the sampling session itself is left out.
    const samples: Array<{ inFlight: number; idleInTransaction: number; busy: number }> = [];
    let finished = false;
    const run = t.app.cycles.runCycle().finally(() => (finished = true));
    // Sampled for as long as the cycle runs, so a fast cycle cannot leave the loop waiting for samples.
    while (!finished) {
      await new Promise((r) => setTimeout(r, 20));
      if (inFlight < CALLS / 2) continue;
      const [row] = await t.ds.query<Array<{ idle: number; busy: number }>>(
        `SELECT count(*) FILTER (WHERE state = 'idle in transaction')::int AS idle,
                count(*) FILTER (WHERE state <> 'idle' AND pid <> pg_backend_pid())::int AS busy
           FROM pg_stat_activity WHERE datname = current_database()`,
      );
      samples.push({ inFlight, idleInTransaction: row.idle, busy: row.busy });
    }
    const report = completed(await run);

    console.log(
      `calls in flight when sampled: ${samples.map((s) => s.inFlight).join(', ')}; idle in transaction: ${samples.map((s) => s.idleInTransaction).join(', ')}; other busy backends: ${samples.map((s) => s.busy).join(', ')}`,
    );
    expect(report.counts).toMatchObject({ sent: CALLS, errors: 0 });
    expect(t.app.provider.maxInFlight()).toBe(CALLS);
    expect(samples.length).toBeGreaterThanOrEqual(1);
    for (const sample of samples) expect(sample.idleInTransaction).toBe(0);
    // While every call is in flight and none has answered, nothing of the worker's is on the database.
    const allInFlight = samples.filter((s) => s.inFlight === CALLS);
    expect(allInFlight.length).toBeGreaterThanOrEqual(1);
    for (const sample of allInFlight) expect(sample.busy).toBe(0);
    expect(await outboxEvents(t.ds)).toHaveLength(ids.length);
  });
});
