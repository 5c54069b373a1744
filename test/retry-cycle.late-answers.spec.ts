import type { DataSource } from 'typeorm';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { completed } from './support/cycle-reports';
import { deferred, waitFor } from './support/deferred';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A provider that answers after the channel timeout: its answer is the outcome
 * when it comes within the settle margin, and this instance never starts a
 * second call for a notification whose previous call has not settled
 * (DESIGN §3.4). Default options: the settle margin is the module's default.
 */
describe('late provider answers (real PostgreSQL)', () => {
  // Each test sets up its own channel.
  const t = useRetryTestApp({ channels: [] });
  let app: RetryTestApp;
  let ds: DataSource;

  beforeEach(() => {
    ({ app, ds } = t);
  });

  /** The e-mail channel with a 100 ms timeout and no backoff: a row written off is due again at once. */
  const insertZeroBackoffChannel = (maxAttempts: number) =>
    insertChannel(ds, {
      key: 'email',
      maxAttempts,
      timeoutMs: 100,
      backoffKind: 'Fixed',
      backoffBaseMs: 0,
      backoffMaxMs: null,
    });
  it('records a success that comes 500 ms after a 300 ms timeout on the last attempt as Sent, once, with no alert', async () => {
    await insertChannel(ds, { key: 'email', maxAttempts: 3, timeoutMs: 300 });
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 2,
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });
    app.provider.respondWith(async (message) => {
      await sleep(800);
      return { providerMessageId: `late-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, terminal: 0, retried: 0 });
    const row = await readNotification(ds, id);
    expect(row).toMatchObject({ status: 'Sent', attempts: 3, provider_message_id: `late-${id}` });
    const events = await outboxEvents(ds, id);
    expect(events.map((event) => event.payload.status)).toEqual(['Sent']);
    expect(app.alerts.alerts).toHaveLength(0);
    expect(app.provider.callsFor(id)).toBe(1);
  });

  it('records a success answered after the signal fired, by an adapter that stops only then', async () => {
    await insertChannel(ds, { key: 'email', maxAttempts: 1, timeoutMs: 100 });
    const id = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(app.clock.now(), 1),
    });
    app.provider.respondWith(async (message, { signal }) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      await sleep(50);
      return { providerMessageId: `after-abort-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, terminal: 0 });
    expect(await readNotification(ds, id)).toMatchObject({ status: 'Sent', attempts: 1 });
    expect((await outboxEvents(ds, id)).map((event) => event.payload.status)).toEqual(['Sent']);
  });

  it('never starts a second call for a notification while its previous call is still running, and records that call’s late success', async () => {
    // Zero backoff: after the first attempt is written off as a timeout, the row is due again at once.
    await insertZeroBackoffChannel(5);
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });
    const release = deferred();
    app.provider.respondWith(async (message) => {
      await release.promise;
      return { providerMessageId: `slow-${message.id}` };
    });

    // The first call outlives its timeout and the settle margin: the attempt is written off.
    const first = completed(await app.cycles.runCycle());
    expect(first.counts.retried).toBe(1);
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Failed',
      attempts: 2,
      last_error_code: 'provider_timeout',
    });

    // Due again, but its call has not settled: later cycles leave it alone.
    for (let cycle = 0; cycle < 3; cycle++) completed(await app.cycles.runCycle());
    expect(app.provider.callsFor(id)).toBe(1);

    release.resolve();
    await waitFor(() => app.logs.events('late-success-recorded').length > 0);
    // The attempt it was was counted when it was written off: not counted again.
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Sent',
      attempts: 2,
      provider_message_id: `slow-${id}`,
    });
    completed(await app.cycles.runCycle());
    expect(app.provider.callsFor(id)).toBe(1);
    expect(app.provider.maxInFlight()).toBe(1);
    expect((await outboxEvents(ds, id)).map((event) => event.payload.status)).toEqual(['Sent']);
  }, 30_000);

  it('never ends a row terminal on a call still unanswered after the margin: it is deferred, and its late success is recorded with the attempt counted once', async () => {
    await insertZeroBackoffChannel(1);
    const id = await insertNotification(ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(app.clock.now(), 1),
    });
    const release = deferred();
    app.provider.respondWith(async (message) => {
      // Delivered, but the answer comes only after the timeout and the whole settle margin.
      await release.promise;
      return { providerMessageId: `late-${message.id}` };
    });

    const first = completed(await app.cycles.runCycle());

    expect(first.counts).toMatchObject({ terminal: 0, deferred: 1 });
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Pending',
      attempts: 0,
      last_error_code: 'provider_timeout',
    });
    expect(await outboxEvents(ds, id)).toEqual([]);
    expect(app.alerts.alerts).toHaveLength(0);

    release.resolve();
    await waitFor(() => app.logs.events('late-success-recorded').length > 0);

    // Deferred, the row never counted that call: the late success counts it, once.
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Sent',
      attempts: 1,
      provider_message_id: `late-${id}`,
    });
    expect((await outboxEvents(ds, id)).map((event) => event.payload.status)).toEqual(['Sent']);
    expect(app.logs.events('late-success-recorded')).toEqual([
      expect.objectContaining({ notificationId: id, foundAs: 'pending', attempts: 1 }),
    ]);
    completed(await app.cycles.runCycle());
    expect(app.provider.callsFor(id)).toBe(1);
    expect(app.alerts.alerts).toHaveLength(0);
  }, 30_000);

  it('gives up on an adapter call that never settles after the lease TTL, logs it, and sends the row again', async () => {
    // A short lease: the longest a never-settling call keeps its notification to itself.
    const short = await t.start({
      options: {
        lockTtlMs: 6_500,
        // Room for the channel's claim (timeout + margin + write allowance) before the deadline.
        maxCycleDurationMs: 1_000,
        settleMarginMs: 0,
        // Its second call never settles either: closing would wait the whole grace for it.
        shutdownGraceMs: 100,
        instanceId: 'short',
      },
    });
    await app.reset();
    await insertZeroBackoffChannel(5);
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(short.clock.now(), 1),
    });
    short.clock.set(app.clock.now());
    // Never answers, ignores its signal.
    short.provider.respondWith(() => new Promise(() => undefined));

    completed(await short.cycles.runCycle());
    completed(await short.cycles.runCycle());
    expect(short.provider.callsFor(id)).toBe(1);

    await waitFor(() => short.logs.events('provider-call-abandoned').length > 0, 10_000);
    expect(short.logs.events('provider-call-abandoned')).toEqual([
      expect.objectContaining({ notificationId: id, afterMs: 6_500 }),
    ]);
    completed(await short.cycles.runCycle());
    expect(short.provider.callsFor(id)).toBe(2);
  }, 30_000);
});
