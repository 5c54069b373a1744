import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { SqlRunner } from '@pin/notifications-retry/persistence/sql-runner';
import { OutboxRelayRepository } from '@pin/notifications-retry/outbox/outbox-relay.repository';
import { completed } from './support/cycle-reports';
import { deferred, waitFor } from './support/deferred';
import { insertChannel, outboxEvents, readNotification } from './support/fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

const SETTLE_STATEMENT = /nr_settle_rows|UPDATE "notifications" AS n\s+SET "status"/;

/** `count` due Failed rows of the email channel; their ids. */
async function dueRows(app: RetryTestApp, count: number): Promise<string[]> {
  const rows = await app.dataSource.query<Array<{ id: string }>>(
    `INSERT INTO notifications (id, channel, recipient_address, body, status, attempts, next_attempt_at)
     SELECT gen_random_uuid(), 'email', 'person-' || g || '@example.com', 'Hello.', 'Failed', 1,
            $1::timestamptz - (g || ' ms')::interval
       FROM generate_series(1, $2::int) AS g
     RETURNING id`,
    [new Date(app.clock.now().getTime() - 60_000), count],
  );
  return rows.map((row) => row.id);
}

/** Every row Sent with one Sent event, and its provider called once. */
async function expectEachSentOnce(app: RetryTestApp, ids: readonly string[]): Promise<void> {
  const rows = await app.dataSource.query<Array<{ status: string; events: number }>>(
    `SELECT n.status, (SELECT count(*)::int FROM notification_outbox o WHERE o.message_key = n.id::text) AS events
       FROM notifications n WHERE n.id = ANY($1::uuid[])`,
    [ids],
  );
  expect(rows.filter((row) => row.status !== 'Sent')).toEqual([]);
  expect(rows.filter((row) => row.events !== 1)).toEqual([]);
  const twice = ids.filter((id) => app.provider.callsFor(id) !== 1);
  expect(twice).toEqual([]);
}

/**
 * DESIGN §3.5: a connection that failed with a fatal or connection-class error
 * is destroyed, never pooled again, and the write is tried again on a fresh
 * one; a write that fails for a passing reason is tried again while the row's
 * claim lives.
 */
describe('outcome writes through database faults (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let app: RetryTestApp;
  let admin: Client;

  beforeAll(async () => {
    admin = new Client({ connectionString: t.db.url });
    await admin.connect();
    t.teardown(() => admin.end());
  });

  afterEach(async () => {
    // The harness has closed this test's app.
    await admin.query(`ALTER DATABASE ${t.db.name} RESET lock_timeout`);
  });

  it('the client of a terminated backend is destroyed: the statement waiting for a connection gets a fresh one', async () => {
    app = await t.start({ poolSize: 2 });
    const sql = app.module.get(SqlRunner, { strict: false });
    const sleep = { name: 'test_sleep', text: 'SELECT pg_sleep(1) AS slept' };
    const probe = { name: 'test_probe', text: 'SELECT pg_backend_pid() AS pid' };
    // Both pooled connections busy, a third statement waiting for one of them.
    const first = sql.run(sleep, []);
    const second = sql.run(sleep, []);
    let sleeping: number[] = [];
    for (let i = 0; i < 400 && sleeping.length < 2; i++) {
      const rows = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(1)%'`,
      );
      sleeping = rows.rows.map((row) => row.pid);
      if (sleeping.length < 2) await new Promise((r) => setTimeout(r, 5));
    }
    expect(sleeping).toHaveLength(2);
    const waiting = sql.run<{ pid: number }>(probe, []);
    await admin.query('SELECT pg_terminate_backend($1)', [sleeping[0]]);

    await expect(Promise.race([first, second])).rejects.toMatchObject({ code: '57P01' });
    const [{ pid }] = await waiting;
    expect(sleeping).not.toContain(pid);
    await Promise.allSettled([first, second]);
  });

  it("the relay's statements too: a terminated backend's client is not handed to the statement waiting for one", async () => {
    app = await t.start({ poolSize: 2 });
    await app.reset();
    const relay = app.module.get(OutboxRelayRepository, { strict: false });
    const blocker = new Client({ connectionString: t.db.url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE notification_outbox IN EXCLUSIVE MODE');
    let outcomes: PromiseSettledResult<number>[] = [];
    try {
      // Both pooled connections wait on the lock; a third statement waits for one of them.
      const first = relay.markPublished(randomUUID(), [randomUUID()]);
      const second = relay.release(randomUUID(), [randomUUID()]);
      let waiting: number[] = [];
      for (let i = 0; i < 400 && waiting.length < 2; i++) {
        const rows = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE "notification_outbox"%'`,
        );
        waiting = rows.rows.map((row) => row.pid);
        if (waiting.length < 2) await new Promise((r) => setTimeout(r, 5));
      }
      expect(waiting).toHaveLength(2);
      const backlog = relay.backlog();
      await admin.query('SELECT pg_terminate_backend($1)', [waiting[0]]);
      await blocker.query('ROLLBACK');
      outcomes = await Promise.allSettled([first, second]);
      await expect(backlog).resolves.toMatchObject({ unpublished: 0, parked: 0 });
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
  });

  it('a backend killed while it carries a group commit of 100 outcomes: all 100 end Sent, one event each', async () => {
    const ROWS = 100;
    app = await t.start({
      options: { concurrency: ROWS, batchSize: ROWS },
    });
    await app.reset();
    await insertChannel(app.dataSource, { key: 'email' });
    const ids = await dueRows(app, ROWS);
    const gate = deferred();
    let started = 0;
    app.provider.respondWith(async (message) => {
      started++;
      await gate.promise;
      return { providerMessageId: `p-${message.id}` };
    });

    const run = app.cycles.runCycle();
    await waitFor(() => started === ROWS, 20_000);
    // The settle statement's outbox insert waits on this lock: its backend is found and killed there.
    const blocker = new Client({ connectionString: t.db.url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE notification_outbox IN EXCLUSIVE MODE');
    gate.resolve();
    let killed: number[] = [];
    try {
      const started = Date.now();
      while (killed.length === 0 && Date.now() - started < 20_000) {
        const waiting = await admin.query<{ pid: number; query: string }>(
          `SELECT pid, query FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        killed = waiting.rows.filter((row) => SETTLE_STATEMENT.test(row.query)).map((r) => r.pid);
        if (killed.length === 0) await new Promise((r) => setTimeout(r, 5));
      }
      for (const pid of killed) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    const report = completed(await run);

    expect(killed.length).toBeGreaterThan(0);
    expect(report.counts).toMatchObject({ sent: ROWS, errors: 0 });
    await expectEachSentOnce(app, ids);
    // Nothing is held or due again: a second cycle calls nobody.
    completed(await app.cycles.runCycle());
    expect(app.provider.calls).toHaveLength(ROWS);
  });

  it("a DBA's lock_timeout and a migration's 2 s table lock mid-cycle: 200 delivered rows end Sent, none sent twice", async () => {
    const ROWS = 200;
    await admin.query(`ALTER DATABASE ${t.db.name} SET lock_timeout = '100ms'`);
    // Connections opened from here on carry the role's setting, as a DBA's would.
    app = await t.start({
      options: { concurrency: 50, batchSize: ROWS },
    });
    const [{ lock_timeout }] =
      await app.dataSource.query<Array<{ lock_timeout: string }>>('SHOW lock_timeout');
    expect(lock_timeout).toBe('100ms');
    await app.reset();
    await insertChannel(app.dataSource, { key: 'email', timeoutMs: 3_000 });
    const ids = await dueRows(app, ROWS);
    let calls = 0;
    const lockTaken = deferred();
    app.provider.respondWith(async (message) => {
      calls++;
      if (calls === 60) lockTaken.resolve();
      await new Promise((r) => setTimeout(r, 20));
      return { providerMessageId: `p-${message.id}` };
    });

    const run = app.cycles.runCycle();
    await lockTaken.promise;
    const migration = new Client({ connectionString: t.db.url });
    await migration.connect();
    await migration.query('SET lock_timeout = 0');
    await migration.query('BEGIN');
    await migration.query('LOCK TABLE notifications IN ACCESS EXCLUSIVE MODE');
    await new Promise((r) => setTimeout(r, 2_000));
    await migration.query('COMMIT');
    await migration.end();
    const report = completed(await run);
    // What the cycle did not reach before its end is due now: the next cycle sends the rest.
    for (let i = 0; i < 5 && app.provider.calls.length < ROWS; i++)
      completed(await app.cycles.runCycle());

    expect(report.counts.errors).toBe(0);
    await expectEachSentOnce(app, ids);
    for (const id of ids.slice(0, 3))
      expect(await outboxEvents(app.dataSource, id)).toHaveLength(1);
    expect((await readNotification(app.dataSource, ids[0])).claim_token).toBeNull();
  });
});
