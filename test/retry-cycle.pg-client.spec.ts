import { Client, type Pool, type QueryConfig } from 'pg';
import type { DataSource } from 'typeorm';
import type { PreparedStatementsOption } from '@pin/notifications-retry';
import { NotificationRepository } from '@pin/notifications-retry/persistence/notification.repository';
import { runInPooledPgTransaction } from '@pin/notifications-retry/persistence/pooled-pg-transaction';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { completed } from './support/cycle-reports';
import { createRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/** The `pg` pool behind the app's TypeORM DataSource. */
function poolOf(ds: DataSource): Pool {
  return (ds.driver as unknown as { master: Pool }).master;
}

/** Every checked-out client has been given back (nothing leaked by the row transactions). */
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
  'the row transaction on a bare pg client, $label (real PostgreSQL)',
  ({ preparedStatements }) => {
    let db: TestDatabase;
    let app: RetryTestApp;
    let ds: DataSource;

    beforeAll(async () => {
      db = await createTestDatabase();
      app = await createRetryTestApp({
        url: db.url,
        options: { preparedStatements, concurrency: 2 },
      });
      ds = app.dataSource;
    });

    afterAll(async () => {
      await app?.close();
      await db?.drop();
    });

    beforeEach(async () => {
      await app.reset();
      app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
      await insertChannel(ds, { key: 'email', maxAttempts: 3 });
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
        expect(await readNotification(ds, id)).toMatchObject({ status: 'Sent' });
      }
      expect(await outboxEvents(ds)).toHaveLength(6);
      const named = names.filter((name): name is string => name !== null);
      if (preparedStatements !== false) {
        // The lock and the fused write of each row: two texts, so two names.
        expect(new Set(named).size).toBe(2);
        expect(named).toHaveLength(6);
        expect(named.every((name) => name.startsWith('notifications_retry_'))).toBe(true);
      } else {
        expect(named).toEqual([]);
      }
      // Decided once, at the first row transaction (the worker is off in this app), and logged.
      expect(app.logs.events('prepared-statements')).toEqual([
        expect.objectContaining({
          named: preparedStatements !== false,
          reason: preparedStatements === 'auto' ? 'direct-connection' : 'option',
        }),
      ]);
      expectNoClientCheckedOut(ds);
    });

    /** The Sent write was rolled back; the attempt is recorded on its own and the row waits out its backoff. */
    function expectUnrecordedSuccessHeld(
      before: Awaited<ReturnType<typeof readNotification>>,
      after: Awaited<ReturnType<typeof readNotification>>,
    ): void {
      expect(after).toMatchObject({
        status: 'Failed',
        attempts: before.attempts + 1,
        provider_message_id: null,
        sent_at: null,
        last_error_code: 'outcome_not_recorded',
      });
      expect(after.next_attempt_at!.getTime()).toBeGreaterThan(app.clock.now().getTime());
    }

    it('rolls back and gives the client back when a statement of the row fails', async () => {
      const now = app.clock.now();
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      const before = await readNotification(ds, id);
      const spy = jest
        .spyOn(NotificationRepository.prototype, 'applyTransitionFenced')
        .mockRejectedValueOnce(new Error('write failed'));
      try {
        const report = completed(await app.cycles.runCycle());
        expect(report.counts).toMatchObject({ processed: 0, errors: 1 });
      } finally {
        spy.mockRestore();
      }
      // Rolled back: not Sent, no event; the provider's success is kept only as a counted attempt.
      expectUnrecordedSuccessHeld(before, await readNotification(ds, id));
      expect(await outboxEvents(ds)).toHaveLength(0);
      // Rolled back, not left open: nothing holds the row, the next cycle after its backoff takes it.
      app.clock.advance(3_600_000);
      expect(completed(await app.cycles.runCycle()).counts).toMatchObject({ sent: 1 });
      expectNoClientCheckedOut(ds);
    });

    it('gives the client back when the lease is taken over during the provider call, writing nothing', async () => {
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
      expectNoClientCheckedOut(ds);
      await ds.query(`UPDATE distributed_locks SET expires_at = now()`);
    });

    it('survives the connection being killed mid-transaction: nothing committed, the row waits for its retry and the pool drops that client', async () => {
      const now = app.clock.now();
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      const before = await readNotification(ds, id);
      let killed = 0;
      app.provider.respondWith(async (message) => {
        // The row's connection sits idle in its transaction while the provider works: kill it, as
        // a failover or an idle_in_transaction_session_timeout would.
        const rows: Array<{ pid: number }> = await ds.query(
          `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'idle in transaction'
            AND pid <> pg_backend_pid()`,
        );
        for (const { pid } of rows) {
          await ds.query('SELECT pg_terminate_backend($1)', [pid]);
          killed++;
        }
        // Let the client see the server close the connection before the row's next statement.
        await new Promise((resolve) => setTimeout(resolve, 100));
        return { providerMessageId: `p-${message.id}` };
      });

      const report = completed(await app.cycles.runCycle());

      expect(killed).toBe(1);
      expect(report.counts).toMatchObject({ processed: 0, errors: 1 });
      expectUnrecordedSuccessHeld(before, await readNotification(ds, id));
      expect(await outboxEvents(ds)).toHaveLength(0);
      expectNoClientCheckedOut(ds);

      // Had the dead client gone back to the pool, the next row would be handed it (the pool reuses
      // the most recently released client first) and fail.
      app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
      app.clock.advance(3_600_000);
      expect(completed(await app.cycles.runCycle()).counts).toMatchObject({ sent: 1, errors: 0 });
      expect(await readNotification(ds, id)).toMatchObject({ status: 'Sent' });
    });

    it('does not report a transaction as committed when the server answers COMMIT with ROLLBACK', async () => {
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(app.clock.now(), 2),
      });
      const run = runInPooledPgTransaction(
        ds,
        { preparedStatements: preparedStatements !== false, idleInTransactionTimeoutMs: 90_000 },
        async (executor) => {
          await executor.query(`UPDATE notifications SET attempts = 9 WHERE id = $1`, [id]);
          // An error swallowed inside the unit of work leaves the transaction aborted.
          await executor.query('SELECT 1 / 0').catch(() => undefined);
          return 'written';
        },
      );
      await expect(run).rejects.toThrow(/rolled back at COMMIT \(server answered ROLLBACK\)/);
      expect((await readNotification(ds, id)).attempts).toBe(1);
      expectNoClientCheckedOut(ds);
    });
  },
);
