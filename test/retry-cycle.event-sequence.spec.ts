import { RetriableDeliveryError, TerminalRedrive } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  eventSequence,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { useRetryTestApp } from './support/retry-test-app';

const operator = { actor: 'ops:test', reason: 'provider fixed the template' };

/**
 * Issue 18 point 6: every outbox event of a notification carries `sequence`,
 * the notification's event number, strictly increasing over its whole life
 * (DESIGN §7), given by the statement that writes the event.
 */
describe('the per-notification event sequence (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    channels: [
      {
        key: 'email',
        maxAttempts: 2,
        backoffKind: 'Fixed',
        backoffBaseMs: 0,
        backoffMaxMs: null,
      },
    ],
  });

  it('numbers a terminal Failed 1 and, after a redrive, the new episode’s Sent 2; intermediate failures and the redrive take no number', async () => {
    const { app, ds } = t;
    const id = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(app.clock.now(), 1),
    });
    app.provider.respondWith(() => {
      throw new RetriableDeliveryError('http_503', 'upstream unavailable');
    });

    completed(await app.cycles.runCycle());
    expect(await readNotification(ds, id)).toMatchObject({ status: 'Failed', attempts: 1 });
    expect(await eventSequence(ds, id)).toBe(0);

    completed(await app.cycles.runCycle());
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Failed',
      attempts: 2,
      next_attempt_at: null,
    });
    expect(await eventSequence(ds, id)).toBe(1);

    const redriven = await app.module
      .get(TerminalRedrive)
      .redrive({ filter: { ids: [id] }, dryRun: false, operator });
    expect(redriven.redriven).toBe(1);
    expect(await eventSequence(ds, id)).toBe(1);

    // The redrive makes the row due by the database's clock; the cycle's is the test's.
    const [{ now }] = await ds.query<Array<{ now: Date }>>(
      `SELECT now() + interval '1 minute' AS now`,
    );
    app.clock.set(new Date(Math.max(now.getTime(), app.clock.now().getTime())));
    app.provider.respondWith((message) => ({ providerMessageId: `pm-${message.id}` }));
    completed(await app.cycles.runCycle());

    expect(await readNotification(ds, id)).toMatchObject({ status: 'Sent', attempts: 1 });
    const events = await outboxEvents(ds, id);
    expect(events.map((e) => [e.payload.status, e.payload.sequence])).toEqual([
      ['Failed', 1],
      ['Sent', 2],
    ]);
    expect(await eventSequence(ds, id)).toBe(2);
  });

  it('gives each row written in a cycle (group-committed together) its own next number, and none to a row written without an event', async () => {
    const { app, ds } = t;
    const fresh = await insertNotification(ds, {
      status: 'Failed',
      attempts: 0,
      nextAttemptAt: minutesAgo(app.clock.now(), 3),
    });
    // A notification with events from an earlier life (say, two episodes before a redrive).
    const older = await insertNotification(ds, {
      status: 'Failed',
      attempts: 0,
      nextAttemptAt: minutesAgo(app.clock.now(), 2),
    });
    await ds.query(`UPDATE notifications SET event_sequence = 5 WHERE id = $1`, [older]);
    const retried = await insertNotification(ds, {
      status: 'Failed',
      attempts: 0,
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });
    app.provider.respondWith((message) => {
      if (message.id === retried) throw new RetriableDeliveryError('http_503', 'unavailable');
      return { providerMessageId: `pm-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 2, retried: 1 });
    expect((await outboxEvents(ds, fresh)).map((e) => e.payload.sequence)).toEqual([1]);
    expect((await outboxEvents(ds, older)).map((e) => e.payload.sequence)).toEqual([6]);
    expect(await outboxEvents(ds, retried)).toEqual([]);
    expect(await eventSequence(ds, fresh)).toBe(1);
    expect(await eventSequence(ds, older)).toBe(6);
    expect(await eventSequence(ds, retried)).toBe(0);
  });
});
