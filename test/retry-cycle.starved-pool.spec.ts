import type { Pool, PoolClient } from 'pg';
import { completed } from './support/cycle-reports';
import { readNotification } from './support/fixtures';
import { useRetryTestApp } from './support/retry-test-app';

const LEASE_TTL_MS = 6_500;

/**
 * DESIGN §3 / issue 12 item 8: a starving pool cannot outlive the lease. While
 * the provider calls run, the host's other work takes every pooled connection
 * and keeps them past the lease's end: the cycle stops waiting for one when
 * the lease could have run out (a statement after that would be fenced
 * anyway), starts no call after it, and says why.
 */
describe('a starved pool and the lease (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    poolSize: 3,
    options: {
      concurrency: 2,
      lockTtlMs: LEASE_TTL_MS,
      maxCycleDurationMs: 1_000,
      settleMarginMs: 0,
    },
    channels: [{ key: 'email', timeoutMs: 300 }],
  });

  it('gives up on a connection when the lease could run out, writes nothing, starts no call after it', async () => {
    const ids = await t.dueRows(4);
    const before = await Promise.all(ids.map((id) => readNotification(t.ds, id)));
    const pool = (t.ds.driver as unknown as { master: Pool }).master;
    const held: PoolClient[] = [];
    let starved: Promise<void> | undefined;
    t.app.provider.respondWith(async (message) => {
      // The first call takes the whole pool away for longer than the lease lives.
      starved ??= (async () => {
        for (let i = 0; i < 3; i++) held.push(await pool.connect());
        await new Promise((r) => setTimeout(r, LEASE_TTL_MS + 1_000));
        for (const client of held) client.release();
      })();
      await new Promise((r) => setTimeout(r, 100));
      return { providerMessageId: `p-${message.id}` };
    });

    const started = performance.now();
    const report = completed(await t.app.cycles.runCycle());
    await starved;

    expect(report.stopReason).toBe('lease-lost');
    expect(report.counts).toMatchObject({ processed: 0, sent: 0 });
    expect(t.app.logs.events('lease-lost')).toEqual([
      expect.objectContaining({ cause: 'no-connection-before-lease-end' }),
    ]);
    // Every call started well inside the lease; none after the pool was taken.
    expect(t.app.provider.calls).toHaveLength(2);
    for (const call of t.app.provider.calls)
      expect(call.startedAt - started).toBeLessThan(LEASE_TTL_MS);
    // Nothing written; the rows not yet called were handed back or never claimed.
    for (const [i, id] of ids.entries()) {
      const row = await readNotification(t.ds, id);
      expect({ status: row.status, attempts: row.attempts, sent: row.sent_at }).toEqual({
        status: before[i].status,
        attempts: before[i].attempts,
        sent: null,
      });
    }
  }, 30_000);
});
