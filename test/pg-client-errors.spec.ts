import type { EventEmitter } from 'node:events';
import type { Pool, PoolClient } from 'pg';
import { register } from 'prom-client';
import { RetryMetricName } from '@pin/notifications-retry';
import { waitFor } from './support/deferred';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

/** The host DataSource's pg pool, as TypeORM's postgres driver holds it. */
const poolOf = (app: RetryTestApp): Pool =>
  (app.dataSource.driver as unknown as { master: Pool }).master;

async function clientErrorsCounted(): Promise<number> {
  const metric = register.getSingleMetric(RetryMetricName.databaseClientErrors);
  const values = (await metric?.get())?.values ?? [];
  return values.reduce((sum, value) => sum + value.value, 0);
}

/**
 * A pool client whose connection the server drops while it is checked out and
 * between queries emits `error`; pg-pool listens only while a client is idle.
 * Without a listener Node turns that into an uncaught exception, which kills
 * the process (430 of them in 30 s of pg_terminate_backend storms).
 */
describe('pg client errors on the host DataSource (real PostgreSQL)', () => {
  const t = useRetryTestApp();

  it('gives every client an error listener from the moment the pool creates it, checked out or not', async () => {
    const pool = poolOf(t.app);
    // More clients than the pool holds idle: some are new, made after the module started.
    const clients: PoolClient[] = await Promise.all(
      Array.from({ length: 6 }, () => pool.connect()),
    );
    try {
      for (const client of clients) {
        expect((client as unknown as EventEmitter).listenerCount('error')).toBeGreaterThan(0);
      }
    } finally {
      for (const client of clients) client.release();
    }
  });

  it('logs and counts an error on a checked-out client whose backend is terminated, and the process lives on', async () => {
    const pool = poolOf(t.app);
    const client = await pool.connect();
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    const before = await clientErrorsCounted();
    t.app.logs.entries.length = 0;

    try {
      // Checked out, no query running: exactly the moment nobody else listens.
      await t.app.dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
      await waitFor(() => t.app.logs.events('pg-client-error').length > 0, 10_000);
    } finally {
      client.release(new Error('connection terminated'));
    }

    // pg reports the server's message (57P01) and then the lost connection: one count each.
    expect(await clientErrorsCounted()).toBeGreaterThan(before);
    expect(t.app.logs.events('pg-client-error')[0]).toMatchObject({ code: '57P01' });
    // The pool carries on with fresh connections.
    expect(await t.app.dataSource.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  });
});
