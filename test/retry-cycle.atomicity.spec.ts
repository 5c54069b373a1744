import { RetriableDeliveryError } from '@pin/notifications-retry';
import type { DataSource } from 'typeorm';
import { insertNotification, minutesAgo, outboxEvents, readNotification } from './support/fixtures';
import { completed } from './support/cycle-reports';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

describe('retry cycle atomicity and untouchable rows (real PostgreSQL)', () => {
  const t = useRetryTestApp({ channels: [{ key: 'email', maxAttempts: 3 }] });
  let app: RetryTestApp;
  let ds: DataSource;

  beforeEach(async () => {
    ({ app, ds } = t);
    await ds.query('DROP TRIGGER IF EXISTS outbox_refuses ON notification_outbox');
    app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
  });

  /** The database refuses this row's events, as a full disk or a constraint would. */
  async function refuseEventsOf(id: string): Promise<void> {
    await ds.query(`
      CREATE OR REPLACE FUNCTION refuse_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.message_key = '${id}' THEN RAISE EXCEPTION 'outbox unavailable'; END IF;
        RETURN NEW;
      END $$`);
    await ds.query(
      `CREATE TRIGGER outbox_refuses BEFORE INSERT ON notification_outbox FOR EACH ROW EXECUTE FUNCTION refuse_outbox()`,
    );
  }

  it('rolls the status change back when the outbox insert fails, then holds the row for its backoff instead of re-sending it every cycle', async () => {
    const now = app.clock.now();
    const doomed = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 2),
    });
    const fine = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 1),
    });
    const before = await readNotification(ds, doomed);
    await refuseEventsOf(doomed);

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, errors: 1 });
    expect(await outboxEvents(ds, doomed)).toHaveLength(0);
    expect((await readNotification(ds, fine)).status).toBe('Sent');
    expect(await outboxEvents(ds, fine)).toHaveLength(1);
    expect(app.logs.events('item-error')).toEqual([]);
    // The Sent write was rolled back; what is kept is the attempt, and the row waits out backoff(2) = 120 s.
    const held = await readNotification(ds, doomed);
    expect(held).toMatchObject({
      status: 'Failed',
      attempts: 2,
      next_attempt_at: new Date(now.getTime() + 120_000),
      provider_message_id: before.provider_message_id,
      sent_at: before.sent_at,
      last_error_code: 'outcome_not_recorded',
    });
    expect(app.logs.events('item-outcome-unrecorded')).toEqual([
      expect.objectContaining({
        notificationId: doomed,
        attempts: 2,
        errorCode: 'outcome_not_recorded',
      }),
    ]);

    // The next cycle does not call the provider for it again.
    const callsAfterFirst = app.provider.calls.length;
    completed(await app.cycles.runCycle());
    expect(app.provider.calls.length).toBe(callsAfterFirst);

    // Once the outbox accepts again and the backoff is over, a cycle completes it: nothing lost.
    await ds.query('DROP TRIGGER outbox_refuses ON notification_outbox');
    app.clock.advance(120_000);
    completed(await app.cycles.runCycle());
    expect(await readNotification(ds, doomed)).toMatchObject({ status: 'Sent', attempts: 3 });
    expect(await outboxEvents(ds, doomed)).toHaveLength(1);
  });

  it('calls a failing provider at most max_attempts times when the final outcome can never be recorded', async () => {
    const now = app.clock.now();
    const doomed = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(now, 1),
    });
    app.provider.respondWith(() => {
      throw new RetriableDeliveryError('provider_5xx', 'HTTP 503');
    });
    // Intermediate failures write no event; the terminal one does, and it is refused every time.
    await refuseEventsOf(doomed);

    // Ten cycles, each an hour apart: far more than the backoff of any attempt.
    for (let i = 0; i < 10; i++) {
      completed(await app.cycles.runCycle());
      app.clock.advance(3_600_000);
    }

    // max_attempts is 3: three calls, then the row is exhausted and never called again.
    expect(app.provider.callsFor(doomed)).toBe(3);
    expect(await readNotification(ds, doomed)).toMatchObject({
      status: 'Failed',
      attempts: 3,
      last_error_code: 'outcome_not_recorded',
    });
    expect(await outboxEvents(ds, doomed)).toHaveLength(0);

    // When the outbox is back, the exhausted row ends terminal with its one Failed event.
    await ds.query('DROP TRIGGER outbox_refuses ON notification_outbox');
    completed(await app.cycles.runCycle());
    expect(await readNotification(ds, doomed)).toMatchObject({
      status: 'Failed',
      attempts: 3,
      next_attempt_at: null,
      last_error_code: 'max_attempts_exhausted',
    });
    expect(await outboxEvents(ds, doomed)).toHaveLength(1);
    expect(app.provider.callsFor(doomed)).toBe(3);
  });

  it('does not let a success on the last attempt that could not be recorded end the row as Failed', async () => {
    const now = app.clock.now();
    const delivered = await insertNotification(ds, {
      status: 'Failed',
      attempts: 2,
      nextAttemptAt: minutesAgo(now, 1),
    });
    await refuseEventsOf(delivered);

    completed(await app.cycles.runCycle());

    // The provider delivered it (attempt 3 of 3), but the Sent could not be committed.
    expect(app.provider.callsFor(delivered)).toBe(1);
    const held = await readNotification(ds, delivered);
    expect(held).toMatchObject({
      status: 'Failed',
      attempts: 2,
      last_error_code: 'outcome_not_recorded',
    });
    expect(held.next_attempt_at?.getTime()).toBeGreaterThan(now.getTime());

    // Next time it is due it is sent again (same idempotency key) and recorded as Sent, not exhausted.
    await ds.query('DROP TRIGGER outbox_refuses ON notification_outbox');
    app.clock.advance(3_600_000);
    completed(await app.cycles.runCycle());
    expect(app.provider.callsFor(delivered)).toBe(2);
    expect(new Set(app.provider.calls.map((call) => call.idempotencyKey))).toEqual(
      new Set([delivered]),
    );
    expect(await readNotification(ds, delivered)).toMatchObject({ status: 'Sent', attempts: 3 });
    const events = await outboxEvents(ds, delivered);
    expect(events.map((event) => event.payload.status)).toEqual(['Sent']);
  });

  it('rolls the outbox insert back when the commit fails after both were written', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 2),
    });
    const before = await readNotification(ds, id);
    // Checked at COMMIT, after the UPDATE and the outbox INSERT both ran: only atomicity can undo the
    // INSERT. Every write that settles a claim is refused (the outcome, then the hold); the claim is not.
    await ds.query(`
      CREATE OR REPLACE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.claim_token IS NOT NULL AND NEW.claim_token IS NULL THEN
          RAISE EXCEPTION 'refused at commit';
        END IF;
        RETURN NEW;
      END $$`);
    await ds.query(`
      CREATE CONSTRAINT TRIGGER refuse_commit AFTER UPDATE ON notifications
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()`);
    try {
      const report = completed(await app.cycles.runCycle());
      expect(report.counts).toMatchObject({ errors: 1, sent: 0 });
    } finally {
      await ds.query(`DROP TRIGGER refuse_commit ON notifications`);
    }
    expect(app.provider.calls).toHaveLength(1);
    // The hold is refused at its commit too: the row stays as it was, but for its claim, which
    // lapses as after a crash.
    expect(app.logs.events('item-outcome-unrecorded')).toEqual([
      expect.objectContaining({ notificationId: id, held: false }),
    ]);
    const after = await readNotification(ds, id);
    expect(after).toEqual({
      ...before,
      claim_token: expect.any(String),
      claim_expires_at: expect.any(Date),
      due_at: after.claim_expires_at,
    });
    expect(await outboxEvents(ds)).toHaveLength(0);
  });

  it('never touches Sent rows or terminal Failed rows, whatever their timestamps', async () => {
    const now = app.clock.now();
    const sent = await insertNotification(ds, {
      status: 'Sent',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 10),
      scheduledAt: minutesAgo(now, 10),
      providerMessageId: 'kept',
      sentAt: minutesAgo(now, 9),
    });
    const terminal = await insertNotification(ds, {
      status: 'Failed',
      attempts: 3,
      nextAttemptAt: null,
      scheduledAt: minutesAgo(now, 10),
    });
    const before = [await readNotification(ds, sent), await readNotification(ds, terminal)];

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.processed).toBe(0);
    expect(app.provider.calls).toHaveLength(0);
    expect([await readNotification(ds, sent), await readNotification(ds, terminal)]).toEqual(
      before,
    );
    expect(await outboxEvents(ds)).toHaveLength(0);
  });

  it('does not take a row that another transaction holds (the dispatcher), and takes it once released', async () => {
    const now = app.clock.now();
    const held = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(now, 5),
    });
    const free = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(now, 1),
    });
    const runner = ds.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT id FROM notifications WHERE id = $1 FOR UPDATE`, [held]);

      const report = completed(await app.cycles.runCycle());

      // SKIP LOCKED: the held row is never claimed, so nothing is handed back either.
      expect(report.counts).toMatchObject({ sent: 1, skipped: 0 });
      expect(app.provider.calls.map((c) => c.message.id)).toEqual([free]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    completed(await app.cycles.runCycle());
    expect((await readNotification(ds, held)).status).toBe('Sent');
  });

  it('writes nothing when another writer cleared the claim during the call (token mismatch), and counts it', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 5),
    });
    // The dispatcher delivers it on its own while our call runs, and clears the claim as the
    // data contract asks of other writers.
    app.provider.respondWith(async (message) => {
      await ds.query(
        `UPDATE notifications SET status = 'Sent', sent_at = now(), provider_message_id = 'by-dispatcher',
                claim_token = NULL, claim_expires_at = NULL WHERE id = $1`,
        [message.id],
      );
      return { providerMessageId: `p-${message.id}` };
    });
    const before = { ...(await readNotification(ds, id)) };

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ processed: 0, sent: 0, claimsLost: 1, errors: 0 });
    const after = await readNotification(ds, id);
    expect(after).toMatchObject({
      status: 'Sent',
      attempts: before.attempts,
      provider_message_id: 'by-dispatcher',
      claim_token: null,
    });
    expect(await outboxEvents(ds)).toHaveLength(0);
    expect(app.logs.events('claim-lost')).toEqual([
      expect.objectContaining({ notificationId: id }),
    ]);
  });
});
