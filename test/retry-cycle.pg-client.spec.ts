import { Client, type Pool, type QueryConfig } from 'pg';
import type { DataSource } from 'typeorm';
import type { PreparedStatementsOption } from '@pin/notifications-retry';
import { insertNotification, minutesAgo, outboxEvents, readNotification } from './support/fixtures';
import { completed } from './support/cycle-reports';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

/** The `pg` pool behind the app's TypeORM DataSource. */
function poolOf(ds: DataSource): Pool {
  return (ds.driver as unknown as { master: Pool }).master;
}

/** Every checked-out client has been given back (nothing leaked by the statements). */
function expectNoClientCheckedOut(ds: DataSource): void {
  const pool = poolOf(ds);
  expect(pool.idleCount).toBe(pool.totalCount);
  expect(pool.waitingCount).toBe(0);
}

/** Statement names `pg` sends while `run` runs (an unnamed statement counts as null). */
async function statementNames(run: () => Promise<unknown>): Promise<Array<string | null>> {
  // A spy calls through to the real query.
  const spy = jest.spyOn(Client.prototype, 'query');
  try {
    await run();
    return spy.mock.calls.map(([config]: unknown[]) =>
      typeof config === 'object' && config !== null ? ((config as QueryConfig).name ?? null) : null,
    );
  } finally {
    spy.mockRestore();
  }
}

describe.each<{ preparedStatements: PreparedStatementsOption; label: string }>([
  {
    preparedStatements: 'auto',
    label: "prepared statements 'auto' (default; named on a direct connection)",
  },
  { preparedStatements: true, label: 'prepared statements on' },
  { preparedStatements: false, label: 'prepared statements off' },
])(
  "the library's statements on a bare pg client, $label (real PostgreSQL)",
  ({ preparedStatements }) => {
    const t = useRetryTestApp({
      options: { preparedStatements, concurrency: 2 },
      channels: [{ key: 'email', maxAttempts: 3 }],
    });
    let app: RetryTestApp;
    let ds: DataSource;

    beforeAll(() => {
      ({ app, ds } = t);
    });

    beforeEach(() => {
      app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
    });

    it('runs whole cycles, twice on the same connections, and names statements only when on', async () => {
      const now = app.clock.now();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(
          await insertNotification(ds, {
            status: 'Failed',
            attempts: 1,
            nextAttemptAt: minutesAgo(now, 5 - i),
          }),
        );
      }

      const names = await statementNames(async () => {
        expect(completed(await app.cycles.runCycle()).counts).toMatchObject({
          processed: 3,
          sent: 3,
          errors: 0,
        });
      });
      // Due again: the second cycle runs the same texts on connections that may have them prepared.
      await ds.query(`UPDATE notifications SET status = 'Failed', next_attempt_at = $1`, [
        minutesAgo(now, 1),
      ]);
      expect(completed(await app.cycles.runCycle()).counts).toMatchObject({ sent: 3, errors: 0 });

      for (const id of ids) {
        expect(await readNotification(ds, id)).toMatchObject({ status: 'Sent', claim_token: null });
      }
      expect(await outboxEvents(ds)).toHaveLength(6);
      const named = names.filter((name): name is string => name !== null);
      if (preparedStatements !== false) {
        // Named for what they do: one name per statement, whatever the connection.
        const purposes = new Set(named.map((name) => name.replace(/_[0-9a-f]{12}$/, '')));
        expect(purposes).toEqual(
          new Set([
            'nr_acquire_lease',
            'nr_claim_due_rows',
            'nr_settle_rows',
            'nr_count_waiting_rows',
            'nr_count_failed_backlog',
            'nr_release_lease',
            'nr_paused_channel_keys',
            'nr_record_cycle',
            'nr_delete_expired_cycles',
          ]),
        );
      } else {
        expect(named).toEqual([]);
      }
      // Decided once, at the first cycle (the worker is off in this app), and logged.
      expect(app.logs.events('prepared-statements')).toEqual([
        expect.objectContaining({
          named: preparedStatements !== false,
          reason: preparedStatements === 'auto' ? 'direct-connection' : 'option',
        }),
      ]);
      expectNoClientCheckedOut(ds);
    });

    it('holds the row by backoff, attempt counted, when its outcome cannot be written, and gives the client back', async () => {
      const now = app.clock.now();
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      const before = await readNotification(ds, id);
      // The database refuses this row's Sent, as a constraint or a full disk would.
      await ds.query(`
        CREATE FUNCTION refuse_sent() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.status = 'Sent' AND NEW.id = '${id}' THEN RAISE EXCEPTION 'write failed'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_sent BEFORE UPDATE ON notifications
          FOR EACH ROW EXECUTE FUNCTION refuse_sent();`);
      try {
        const report = completed(await app.cycles.runCycle());
        expect(report.counts).toMatchObject({ processed: 0, errors: 1 });
      } finally {
        await ds.query('DROP TRIGGER refuse_sent ON notifications; DROP FUNCTION refuse_sent()');
      }
      // Not Sent, no event; the provider's success is kept only as a counted attempt.
      const after = await readNotification(ds, id);
      expect(after).toMatchObject({
        status: 'Failed',
        attempts: before.attempts + 1,
        provider_message_id: null,
        sent_at: null,
        last_error_code: 'outcome_not_recorded',
        claim_token: null,
      });
      expect(after.next_attempt_at!.getTime()).toBeGreaterThan(app.clock.now().getTime());
      expect(await outboxEvents(ds)).toHaveLength(0);
      // Nothing holds the row: the next cycle after its backoff takes it.
      app.clock.advance(3_600_000);
      expect(completed(await app.cycles.runCycle({ now: app.clock.now() })).counts).toMatchObject({
        sent: 1,
      });
      expectNoClientCheckedOut(ds);
    });

    it('writes nothing when the lease is taken over during the provider call, and hands the claim back', async () => {
      const now = app.clock.now();
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      const before = await readNotification(ds, id);
      app.provider.respondWith(async (message) => {
        await ds.query(
          `UPDATE distributed_locks
            SET owner = 'another-instance', fencing_token = fencing_token + 1,
                expires_at = now() + interval '1 minute'`,
        );
        return { providerMessageId: `p-${message.id}` };
      });

      const report = completed(await app.cycles.runCycle());

      expect(report.stopReason).toBe('lease-lost');
      expect(await readNotification(ds, id)).toEqual(before);
      expect(await outboxEvents(ds)).toHaveLength(0);
      expect(app.logs.events('lease-lost')).toEqual([
        expect.objectContaining({ cause: 'fence-refused' }),
      ]);
      expectNoClientCheckedOut(ds);
      await ds.query(`UPDATE distributed_locks SET expires_at = now()`);
    });

    it('survives its pooled connections being killed during the provider call: the write gets a live one', async () => {
      const now = app.clock.now();
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      // Three connections in the pool, so that idle ones sit there during the call.
      await Promise.all([1, 2, 3].map(() => ds.query('SELECT pg_sleep(0.05)')));
      let killed = 0;
      app.provider.respondWith(async (message) => {
        // No connection is held during the call; kill every idle one of the pool, as a failover would.
        const rows: Array<{ pid: number }> = await ds.query(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle'`,
        );
        for (const { pid } of rows) {
          await ds.query('SELECT pg_terminate_backend($1)', [pid]);
          killed++;
        }
        // Let the pool see the server close them before the outcome is written.
        await new Promise((resolve) => setTimeout(resolve, 100));
        return { providerMessageId: `p-${message.id}` };
      });

      const report = completed(await app.cycles.runCycle());

      expect(killed).toBeGreaterThanOrEqual(1);
      expect(report.counts).toMatchObject({ sent: 1, errors: 0 });
      expect(await readNotification(ds, id)).toMatchObject({ status: 'Sent', claim_token: null });
      expect(await outboxEvents(ds)).toHaveLength(1);
      expectNoClientCheckedOut(ds);
    });
  },
);
