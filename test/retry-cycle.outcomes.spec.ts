import type { DataSource } from 'typeorm';
import {
  NonRetriableDeliveryError,
  RetriableDeliveryError,
  ThrottledDeliveryError,
  NOTIFICATION_DISPATCHED_TOPIC,
} from '@pin/notifications-retry';
import {
  insertNotification,
  minutesAgo,
  minutesLater,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { completed } from './support/cycle-reports';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

describe('retry cycle outcomes (real PostgreSQL)', () => {
  // Before each test: the app reset, alerts forgotten, every message sent, and this channel.
  const t = useRetryTestApp({
    channels: [
      {
        key: 'email',
        maxAttempts: 3,
        backoffKind: 'Exponential',
        backoffBaseMs: 60_000,
        backoffMaxMs: 3_600_000,
        backoffMultiplier: 2,
      },
    ],
  });
  let app: RetryTestApp;
  let ds: DataSource;

  beforeAll(() => {
    ({ app, ds } = t);
  });

  it('treats an empty batch as a no-op success', async () => {
    const report = completed(await app.cycles.runCycle());
    expect(report.stopReason).toBe('no-more-due');
    expect(report.counts).toEqual({
      processed: 0,
      sent: 0,
      claimsLost: 0,
      retried: 0,
      terminal: 0,
      deferred: 0,
      skipped: 0,
      errors: 0,
    });
    expect(app.provider.calls).toHaveLength(0);
    expect(await outboxEvents(ds)).toHaveLength(0);
    // The lease was released: another owner can take it at once.
    const [lock] = await ds.query(`SELECT expires_at <= now() AS released FROM distributed_locks`);
    expect(lock.released).toBe(true);
  });

  it('sends a due Failed row: Sent, attempts+1, provider id, one Sent event', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.sent).toBe(1);
    // One claim (the cycle's first read) and one outcome write, timed.
    expect(report.timings.claim.count).toBe(1);
    expect(report.timings.settle.count).toBe(1);
    expect(report.timings.claim.totalMs).toBeGreaterThan(0);
    expect(report.timings.settle.maxMs).toBe(report.timings.settle.totalMs);
    const row = await readNotification(ds, id);
    expect(row.status).toBe('Sent');
    expect(row.attempts).toBe(2);
    expect(row.provider_message_id).toBe(`scripted-${id}`);
    expect(row.sent_at?.toISOString()).toBe(now.toISOString());
    expect(row.next_attempt_at).toBeNull();
    expect(row.due_at).toBeNull();
    expect(app.provider.calls[0].idempotencyKey).toBe(id);

    const events = await outboxEvents(ds, id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      topic: NOTIFICATION_DISPATCHED_TOPIC,
      message_key: id,
      contract_version: 1,
    });
    expect(events[0].payload).toMatchObject({
      notificationId: id,
      status: 'Sent',
      attempts: 2,
      providerMessageId: `scripted-${id}`,
    });
    expect(events[0].headers).toMatchObject({
      correlationId: report.correlationId,
      jobRunId: report.runId,
    });
  });

  it('reschedules a retriable failure by backoff: stays Failed, attempts+1, no event', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 5),
    });
    app.provider.respondWith(() => {
      throw new RetriableDeliveryError('provider_5xx', 'upstream returned 503');
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ processed: 1, retried: 1, sent: 0, terminal: 0 });
    const row = await readNotification(ds, id);
    expect(row.status).toBe('Failed');
    expect(row.attempts).toBe(2);
    // Exponential: base × multiplier^(attempts − 1) = 60 s × 2^1.
    expect(row.next_attempt_at?.getTime()).toBe(now.getTime() + 120_000);
    expect(row.last_error_code).toBe('provider_5xx');
    expect(await outboxEvents(ds, id)).toHaveLength(0);
    expect(app.alerts.alerts).toHaveLength(0);
  });

  it('fails terminally when attempts reach max_attempts: one Failed event and an alert', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 2,
      nextAttemptAt: minutesAgo(now, 1),
    });
    app.provider.respondWith(() => {
      throw new RetriableDeliveryError('provider_timeout');
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ processed: 1, terminal: 1, retried: 0 });
    const row = await readNotification(ds, id);
    expect(row).toMatchObject({
      status: 'Failed',
      attempts: 3,
      next_attempt_at: null,
      due_at: null,
      last_error_code: 'provider_timeout',
    });
    const events = await outboxEvents(ds, id);
    expect(events).toHaveLength(1);
    expect(events[0].payload).toMatchObject({
      status: 'Failed',
      attempts: 3,
      errorCode: 'provider_timeout',
    });
    expect(app.alerts.alerts).toEqual([
      expect.objectContaining({
        notificationId: id,
        channel: 'email',
        attempts: 3,
        errorCode: 'provider_timeout',
        runId: report.runId,
      }),
    ]);
  });

  it('fails a non-retriable error terminally at once, whatever attempts are left', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, { status: 'Pending', scheduledAt: minutesAgo(now, 1) });
    app.provider.respondWith(() => {
      throw new NonRetriableDeliveryError('invalid_address', 'mailbox does not exist');
    });

    completed(await app.cycles.runCycle());

    const row = await readNotification(ds, id);
    expect(row).toMatchObject({
      status: 'Failed',
      attempts: 1,
      next_attempt_at: null,
      last_error_code: 'invalid_address',
    });
    expect((await outboxEvents(ds, id)).map((e) => e.payload.status)).toEqual(['Failed']);
    expect(app.alerts.alerts).toHaveLength(1);
  });

  it('fails a row terminally without calling the provider when max_attempts was lowered below its attempts', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 5,
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(app.provider.calls).toHaveLength(0);
    expect(report.counts.terminal).toBe(1);
    const row = await readNotification(ds, id);
    expect(row).toMatchObject({
      status: 'Failed',
      attempts: 5,
      next_attempt_at: null,
      last_error_code: 'max_attempts_exhausted',
    });
    expect(await outboxEvents(ds, id)).toHaveLength(1);
  });

  it('sends a scheduled Pending row once due and leaves a future one alone', async () => {
    const now = app.clock.now();
    const due = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(now, 2),
    });
    const future = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesLater(now, 30),
    });
    const fresh = await insertNotification(ds, { status: 'Pending', scheduledAt: null });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.sent).toBe(1);
    expect((await readNotification(ds, due)).status).toBe('Sent');
    expect((await readNotification(ds, due)).attempts).toBe(1);
    const untouched = await readNotification(ds, future);
    expect(untouched).toMatchObject({ status: 'Pending', attempts: 0 });
    // Fresh Pending rows without scheduled_at belong to the dispatcher.
    expect((await readNotification(ds, fresh)).status).toBe('Pending');
    expect(app.provider.calls.map((c) => c.message.id)).toEqual([due]);

    app.clock.advance(31 * 60_000);
    completed(await app.cycles.runCycle());
    expect((await readNotification(ds, future)).status).toBe('Sent');
  });

  it('defers a throttled row without using an attempt, until exactly retry-after', async () => {
    const now = app.clock.now();
    const failed = await insertNotification(ds, {
      status: 'Failed',
      attempts: 2,
      nextAttemptAt: minutesAgo(now, 1),
    });
    const pending = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(now, 1),
    });
    app.provider.respondWith(() => {
      throw new ThrottledDeliveryError(90_000);
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ deferred: 2, retried: 0, terminal: 0 });
    const failedRow = await readNotification(ds, failed);
    expect(failedRow).toMatchObject({
      status: 'Failed',
      attempts: 2,
      last_error_code: 'provider_throttled',
    });
    // the test's clock does not move during the cycle: due at exactly now + Retry-After, not later
    expect(app.clock.now()).toEqual(now);
    expect(failedRow.next_attempt_at!.getTime()).toBe(now.getTime() + 90_000);
    const pendingRow = await readNotification(ds, pending);
    expect(pendingRow).toMatchObject({ status: 'Pending', attempts: 0 });
    expect(pendingRow.scheduled_at!.getTime()).toBe(now.getTime() + 90_000);
    expect(await outboxEvents(ds)).toHaveLength(0);
  });

  it('cuts a provider that never answers at the channel timeout and retries the row', async () => {
    await ds.query(`UPDATE notification_channels SET timeout_ms = 100`);
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 0,
      nextAttemptAt: minutesAgo(now, 1),
    });
    let signalAborted = false;
    let giveUp: (() => void) | undefined;
    app.provider.respondWith((_message, context) => {
      context.signal.addEventListener('abort', () => (signalAborted = true));
      // Never answers while the test runs.
      return new Promise((_, reject) => (giveUp = () => reject(new Error('test over'))));
    });

    try {
      const started = Date.now();
      const report = completed(await app.cycles.runCycle());

      expect(Date.now() - started).toBeLessThan(5_000);
      expect(report.counts.retried).toBe(1);
      expect(signalAborted).toBe(true);
      expect(await readNotification(ds, id)).toMatchObject({
        status: 'Failed',
        attempts: 1,
        last_error_code: 'provider_timeout',
      });
    } finally {
      // Settled (as a failure: nothing to record), or the app's shutdown would wait out its grace for it.
      giveUp?.();
    }
  });

  it.each([
    [
      'throws a string',
      () => {
        throw 'boom';
      },
      'provider_error_non_error',
    ],
    [
      'throws undefined',
      () => {
        throw undefined;
      },
      'provider_error_non_error',
    ],
    [
      'throws a plain Error',
      () => {
        throw new Error('socket hang up');
      },
      'provider_error',
    ],
    [
      'returns no message id',
      () => ({}) as { providerMessageId: string },
      'provider_invalid_result',
    ],
    [
      'returns undefined',
      () => undefined as unknown as { providerMessageId: string },
      'provider_invalid_result',
    ],
    [
      'returns a numeric id',
      () => ({ providerMessageId: 42 }) as unknown as { providerMessageId: string },
      'provider_invalid_result',
    ],
  ])(
    'counts an adapter that %s as a retriable failure, not a crash',
    async (_label, behaviour, code) => {
      const now = app.clock.now();
      const id = await insertNotification(ds, {
        status: 'Failed',
        attempts: 0,
        nextAttemptAt: minutesAgo(now, 1),
      });
      const other = await insertNotification(ds, {
        status: 'Failed',
        attempts: 0,
        nextAttemptAt: minutesAgo(now, 1),
      });
      app.provider.respondWith((message) =>
        message.id === id ? behaviour() : { providerMessageId: 'ok' },
      );

      const report = completed(await app.cycles.runCycle());

      expect(report.counts).toMatchObject({ retried: 1, sent: 1, errors: 0 });
      expect(await readNotification(ds, id)).toMatchObject({
        status: 'Failed',
        attempts: 1,
        last_error_code: code,
      });
      expect((await readNotification(ds, other)).status).toBe('Sent');
    },
  );

  it('never stores the recipient address or body that a provider error echoes', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
      recipientAddress: 'maria.secret@example.org',
      body: 'Your PIN is 4242 and your balance is large',
    });
    app.provider.respondWith((message) => {
      throw new NonRetriableDeliveryError(
        'invalid_address',
        `rejected ${message.recipientAddress}: "${message.body}"`,
      );
    });

    completed(await app.cycles.runCycle());

    const row = await readNotification(ds, id);
    expect(row.last_error_message).not.toContain('maria.secret');
    expect(row.last_error_message).not.toContain('Your PIN is 4242');
    expect(row.last_error_message).toContain('[redacted]');
    const [event] = await outboxEvents(ds, id);
    expect(JSON.stringify(event)).not.toContain('maria.secret');
  });

  it('processes oldest due first and stops at batchSize', async () => {
    // An app of this test's own, on the same database; the harness closes it after the test.
    const app = await t.start({ options: { batchSize: 3, concurrency: 1 } });
    const ds = app.dataSource;
    const now = app.clock.now();
    const ids: string[] = [];
    for (const minutes of [5, 50, 1, 30, 10]) {
      ids.push(
        await insertNotification(ds, { status: 'Failed', nextAttemptAt: minutesAgo(now, minutes) }),
      );
    }

    const report = completed(await app.cycles.runCycle());

    expect(report.stopReason).toBe('batch-full');
    expect(report.counts.sent).toBe(3);
    // 50, 30 and 10 minutes overdue, in that order.
    expect(app.provider.calls.map((c) => c.message.id)).toEqual([ids[1], ids[3], ids[4]]);
    expect(report.maxLagMs).toBe(50 * 60_000);
  });

  it('keeps an adapter error code that is not a plain identifier out of the row, the event and the alert', async () => {
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
      recipientAddress: 'leaky.code@example.org',
    });
    app.provider.respondWith((message) => {
      throw new NonRetriableDeliveryError(`rejected:${message.recipientAddress}`);
    });

    completed(await app.cycles.runCycle());

    const row = await readNotification(ds, id);
    expect(row.last_error_code).toBe('provider_rejected');
    const [event] = await outboxEvents(ds, id);
    expect(event.payload.errorCode).toBe('provider_rejected');
    expect(JSON.stringify(app.alerts.alerts)).not.toContain('leaky.code');
    expect(JSON.stringify(app.logs.entries)).not.toContain('leaky.code');
  });

  it('claims batch after batch in drain mode until the backlog is gone, each row once', async () => {
    // An app of this test's own, on the same database; the harness closes it after the test.
    const app = await t.start({ options: { batchSize: 4, concurrency: 2, drain: true } });
    const ds = app.dataSource;
    // Zero backoff: a retried row is due again at once, and must still not be taken twice in one cycle.
    await ds.query(`UPDATE notification_channels SET backoff_base_ms = 0, backoff_max_ms = 0`);
    const now = app.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(
        await insertNotification(ds, { status: 'Failed', nextAttemptAt: minutesAgo(now, 10 - i) }),
      );
    }
    app.provider.respondWith((message) => {
      if (message.id === ids[0]) throw new RetriableDeliveryError('http_503');
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.stopReason).toBe('no-more-due');
    expect(report.counts).toMatchObject({ processed: 10, sent: 9, retried: 1 });
    expect(app.provider.callsFor(ids[0])).toBe(1);
    expect(new Set(app.provider.calls.map((c) => c.message.id)).size).toBe(10);
  });

  it('stops at batchSize without drain mode', async () => {
    // An app of this test's own, on the same database; the harness closes it after the test.
    const app = await t.start({ options: { batchSize: 4, concurrency: 2 } });
    const ds = app.dataSource;
    const now = app.clock.now();
    for (let i = 0; i < 10; i++)
      await insertNotification(ds, { status: 'Failed', nextAttemptAt: minutesAgo(now, 10 - i) });

    const report = completed(await app.cycles.runCycle());

    expect(report).toMatchObject({ stopReason: 'batch-full', counts: { processed: 4 } });
  });
});
