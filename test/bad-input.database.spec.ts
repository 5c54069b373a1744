import type { DataSource } from 'typeorm';
import { completed } from './support/cycle-reports';
import {
  type StoredNotification,
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

/**
 * The database says no in the middle of a unit of work or of the cycle. The
 * outbox INSERT refused by a trigger and a failing COMMIT are in
 * retry-cycle.atomicity.spec.ts; these are the rest. Every refused unit of work
 * rolls back whole (status and outbox agree), the row stays due, and the other
 * rows of the cycle are sent.
 */
describe('bad input: database errors (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let app: RetryTestApp;
  let ds: DataSource;

  beforeAll(async () => {
    // Every session of the app gets a short statement timeout, as a cautious DBA would set one.
    // Set before the app connects: the pool's sessions read it at connect time.
    await t.ds.query(`ALTER DATABASE ${t.db.name} SET statement_timeout = '1s'`);
    app = await t.start({ options: { concurrency: 2 } });
    ds = app.dataSource;
  });

  beforeEach(async () => {
    await ds.query(`DROP TRIGGER IF EXISTS bad_input_trigger ON notifications`);
    await ds.query(`DROP TRIGGER IF EXISTS bad_input_trigger ON distributed_locks`);
    await ds.query(`DROP INDEX IF EXISTS notification_outbox_one_event_per_message`);
    await app.reset();
    app.clock.set(new Date('2026-11-30T12:00:00.000Z'));
    app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
    await insertChannel(ds, { key: 'email', maxAttempts: 3 });
  });

  async function twoDueRows(): Promise<{ doomed: string; ordinary: string }> {
    const now = app.clock.now();
    const doomed = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 2),
    });
    const ordinary = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });
    return { doomed, ordinary };
  }

  /**
   * The refused unit of work left the row recoverable: not Sent, not terminal, no event, due again
   * later. Either exactly as it was (rolled back) or, where the worker could still record that the
   * provider was called, with that attempt counted and the backoff applied (outcome_not_recorded).
   */
  async function expectRecoverable(id: string, before: StoredNotification): Promise<void> {
    const row = await readNotification(ds, id);
    if (row.attempts === before.attempts) {
      // Nothing written but the claim, which lapses (as after a crash).
      const { claim_token, claim_expires_at, due_at, ...unclaimed } = row;
      void claim_token;
      void due_at;
      expect(claim_expires_at).not.toBeNull();
      const { claim_token: _t, claim_expires_at: _e, due_at: _d, ...original } = before;
      void _t;
      void _e;
      void _d;
      expect(unclaimed).toEqual(original);
    } else {
      expect(row).toMatchObject({
        status: 'Failed',
        attempts: before.attempts + 1,
        provider_message_id: null,
        last_error_code: 'outcome_not_recorded',
      });
      expect(row.next_attempt_at).not.toBeNull();
    }
  }

  async function expectSentWithOneEvent(id: string): Promise<void> {
    expect((await readNotification(ds, id)).status).toBe('Sent');
    expect(await outboxEvents(ds, id)).toHaveLength(1);
  }

  async function refuseOn(table: string, timing: string, body: string): Promise<void> {
    await ds.query(`
      CREATE OR REPLACE FUNCTION bad_input_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN ${body} RETURN NEW; END $$`);
    await ds.query(
      `CREATE TRIGGER bad_input_trigger ${timing} ON ${table} FOR EACH ROW EXECUTE FUNCTION bad_input_refuse()`,
    );
  }

  it('a trigger raising on the UPDATE of one row: item-error with its message, row recoverable, the rest sent', async () => {
    const { doomed, ordinary } = await twoDueRows();
    const before = await readNotification(ds, doomed);
    await refuseOn(
      'notifications',
      'BEFORE UPDATE',
      // The outcome's write (the one that clears the claim), not the claim itself.
      `IF NEW.id = '${doomed}' AND OLD.claim_token IS NOT NULL AND NEW.claim_token IS NULL THEN
         RAISE EXCEPTION 'notifications are read-only for this row'; END IF;`,
    );

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, errors: 1 });
    expect(app.logs.events('item-outcome-unrecorded')).toEqual([
      expect.objectContaining({
        notificationId: doomed,
        error: expect.stringContaining('notifications are read-only for this row'),
      }),
    ]);
    await expectRecoverable(doomed, before);
    expect(await outboxEvents(ds, doomed)).toHaveLength(0);
    await expectSentWithOneEvent(ordinary);

    await ds.query(`DROP TRIGGER bad_input_trigger ON notifications`);
    // Its claim lapses (by the database's clock, a day ahead of the test's), and its backoff ends.
    await ds.query(
      `UPDATE notifications SET claim_token = NULL, claim_expires_at = NULL WHERE id = $1`,
      [doomed],
    );
    app.clock.advance(24 * 3_600_000); // past any backoff
    completed(await app.cycles.runCycle());
    await expectSentWithOneEvent(doomed);
  });

  it('a unique violation on the outbox INSERT: item-error naming the constraint, nothing half-written, the rest sent', async () => {
    const { doomed, ordinary } = await twoDueRows();
    // A host enforcing one event per notification, and a stale event already there for one row.
    await ds.query(
      `CREATE UNIQUE INDEX notification_outbox_one_event_per_message ON notification_outbox (message_key)`,
    );
    await ds.query(
      `INSERT INTO notification_outbox (topic, message_key, contract_version, payload)
       VALUES ('pin.notifications.dispatched.v1', $1, 1, '{}')`,
      [doomed],
    );
    const before = await readNotification(ds, doomed);

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, errors: 1 });
    expect(app.logs.events('item-outcome-unrecorded')).toEqual([
      expect.objectContaining({
        notificationId: doomed,
        error: expect.stringContaining('notification_outbox_one_event_per_message'),
      }),
    ]);
    await expectRecoverable(doomed, before);
    expect(await outboxEvents(ds, doomed)).toHaveLength(1); // only the stale one
    await expectSentWithOneEvent(ordinary);
  });

  it('a statement timeout on one row’s UPDATE: item-error, row recoverable, the rest sent', async () => {
    const { doomed, ordinary } = await twoDueRows();
    const before = await readNotification(ds, doomed);
    await refuseOn(
      'notifications',
      'BEFORE UPDATE',
      `IF NEW.id = '${doomed}' AND OLD.claim_token IS NOT NULL AND NEW.claim_token IS NULL THEN
         PERFORM pg_sleep(3); END IF;`,
    );

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, errors: 1 });
    expect(app.logs.events('item-outcome-unrecorded')).toEqual([
      expect.objectContaining({
        notificationId: doomed,
        error: expect.stringContaining('statement timeout'),
      }),
    ]);
    await expectRecoverable(doomed, before);
    expect(await outboxEvents(ds, doomed)).toHaveLength(0);
    await expectSentWithOneEvent(ordinary);
  });

  it('a statement timeout on the claim (table locked by a migration): the cycle rejects with it, writes nothing, releases the lease; the next one works', async () => {
    const { doomed, ordinary } = await twoDueRows();
    const blocker = ds.createQueryRunner();
    await blocker.connect();
    try {
      await blocker.query(`SET statement_timeout = 0`);
      await blocker.startTransaction();
      await blocker.query(`LOCK TABLE notifications IN ACCESS EXCLUSIVE MODE`);

      await expect(app.cycles.runCycle()).rejects.toThrow(/statement timeout/);
      expect(app.provider.calls).toHaveLength(0);
      expect(app.cycles.isRunning).toBe(false);
    } finally {
      await blocker.rollbackTransaction().catch(() => undefined);
      await blocker.release();
    }
    const [lease] = await ds.query(`SELECT expires_at <= now() AS released FROM distributed_locks`);
    expect(lease.released).toBe(true);
    expect(await outboxEvents(ds)).toHaveLength(0);

    const report = completed(await app.cycles.runCycle());
    expect(report.counts).toMatchObject({ sent: 2, errors: 0 });
    await expectSentWithOneEvent(doomed);
    await expectSentWithOneEvent(ordinary);
  });

  it('the lease table refusing writes: the cycle rejects with the database error before touching any row', async () => {
    const { doomed, ordinary } = await twoDueRows();
    await refuseOn(
      'distributed_locks',
      'BEFORE INSERT OR UPDATE',
      `RAISE EXCEPTION 'lease table is read-only';`,
    );

    await expect(app.cycles.runCycle()).rejects.toThrow(/lease table is read-only/);
    expect(app.provider.calls).toHaveLength(0);
    expect((await readNotification(ds, doomed)).attempts).toBe(1);
    expect((await readNotification(ds, ordinary)).status).toBe('Failed');

    await ds.query(`DROP TRIGGER bad_input_trigger ON distributed_locks`);
    const report = completed(await app.cycles.runCycle());
    expect(report.counts).toMatchObject({ sent: 2 });
  });
});
