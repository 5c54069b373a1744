import { Injectable } from '@nestjs/common';
import { DistributedLock, type Lease } from '@pin/notifications-retry';
import { OPEN_FENCE } from './support/open-fence';
import { deferred, waitFor } from './support/deferred';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
  resetTables,
} from './support/fixtures';
import { completed } from './support/cycle-reports';
import { useRetryDatabase } from './support/retry-test-app';

/** A lock that never says no: leaves the row locks alone to keep two cycles apart. */
@Injectable()
class AlwaysGrantedLock extends DistributedLock {
  private token = 0;
  acquire(key: string, owner: string): Promise<Lease> {
    return Promise.resolve({ key, owner, fencingToken: ++this.token });
  }
  readonly fence = OPEN_FENCE;
  release(): Promise<void> {
    return Promise.resolve();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('retry cycle under concurrency (real PostgreSQL)', () => {
  const t = useRetryDatabase();

  afterEach(async () => {
    // The harness has closed this test's apps.
    await resetTables(t.ds);
  });

  async function seedDue(count: number, now: Date): Promise<string[]> {
    await insertChannel(t.ds, { key: 'email' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        await insertNotification(t.ds, {
          status: i % 2 ? 'Failed' : 'Pending',
          nextAttemptAt: minutesAgo(now, 1 + (i % 7)),
          scheduledAt: minutesAgo(now, 1 + (i % 5)),
        }),
      );
    }
    return ids;
  }

  it('duplicate run: two applications with their own DataSources start a cycle at once; one runs, every row is sent once', async () => {
    const a = await t.start({ options: { batchSize: 500 } });
    const b = await t.start({ options: { batchSize: 500 } });
    const ids = await seedDue(120, a.clock.now());
    // Whoever wins holds its first call open until the other's report is in, so the two cycles
    // really overlap instead of running one after the other.
    const otherReported = deferred();
    for (const app of [a, b]) {
      app.provider.respondWith(async (message) => {
        await otherReported.promise;
        return { providerMessageId: `p-${message.id}` };
      });
    }

    const runs = [a.cycles.runCycle(), b.cycles.runCycle()];
    const first = await Promise.race(runs);
    expect(first).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });
    otherReported.resolve();
    const reports = await Promise.all(runs);

    expect(reports.map((r) => r.status).sort()).toEqual(['completed', 'skipped']);
    const skipped = reports.find((r) => r.status === 'skipped');
    expect(skipped).toMatchObject({ skipReason: 'lease-held' });
    const calls = [...a.provider.calls, ...b.provider.calls].map((c) => c.message.id);
    expect(calls.sort()).toEqual([...ids].sort());
    const [{ sent }] = await t.ds.query(
      `SELECT count(*)::int AS sent FROM notifications WHERE status = 'Sent'`,
    );
    expect(sent).toBe(ids.length);
    const perRow: Array<{ n: number }> = await t.ds.query(
      `SELECT count(*)::int AS n FROM notification_outbox GROUP BY message_key`,
    );
    expect(perRow).toHaveLength(ids.length);
    expect(perRow.every((r) => r.n === 1)).toBe(true);
  });

  it('claims alone keep two overlapping cycles from sending a row twice', async () => {
    const a = await t.start({
      options: { batchSize: 500, concurrency: 4 },
      extensions: { distributedLock: AlwaysGrantedLock },
    });
    const b = await t.start({
      options: { batchSize: 500, concurrency: 4 },
      extensions: { distributedLock: AlwaysGrantedLock },
    });
    const ids = await seedDue(200, a.clock.now());
    for (const app of [a, b]) {
      app.provider.respondWith(async (message) => {
        await sleep(3);
        return { providerMessageId: `p-${message.id}` };
      });
    }

    const [ra, rb] = (await Promise.all([a.cycles.runCycle(), b.cycles.runCycle()])).map(completed);

    // Both really ran at the same time and split the work.
    expect(ra.counts.processed).toBeGreaterThan(0);
    expect(rb.counts.processed).toBeGreaterThan(0);
    expect(ra.counts.processed + rb.counts.processed).toBe(ids.length);
    // SKIP LOCKED and the claim stamp: neither ever saw a row the other held, nor lost one.
    expect(ra.counts.claimsLost + rb.counts.claimsLost).toBe(0);
    const calls = [...a.provider.calls, ...b.provider.calls].map((c) => c.message.id);
    expect(new Set(calls).size).toBe(calls.length);
    expect(calls).toHaveLength(ids.length);
    const [{ events }] = await t.ds.query(
      `SELECT count(*)::int AS events FROM notification_outbox`,
    );
    expect(events).toBe(ids.length);
  });

  it('cancellation stops at an item boundary: the row in flight is fully written, the rest untouched', async () => {
    const app = await t.start({ options: { concurrency: 1 } });
    const ids = await seedDue(5, app.clock.now());
    const release = deferred();
    app.provider.respondWith(async (message) => {
      await release.promise;
      return { providerMessageId: `p-${message.id}` };
    });
    const controller = new AbortController();

    const running = app.cycles.runCycle({ signal: controller.signal });
    await waitFor(() => app.provider.calls.length === 1);
    controller.abort();
    release.resolve();
    const report = completed(await running);

    expect(report.stopReason).toBe('cancelled');
    expect(report.counts.processed).toBe(1);
    const inFlight = app.provider.calls[0].message.id;
    expect(await readNotification(t.ds, inFlight)).toMatchObject({ status: 'Sent', attempts: 1 });
    expect(await outboxEvents(t.ds, inFlight)).toHaveLength(1);
    for (const id of ids.filter((x) => x !== inFlight)) {
      expect(await readNotification(t.ds, id)).toMatchObject({ attempts: 0, sent_at: null });
    }
    expect(await outboxEvents(t.ds)).toHaveLength(1);
    // The lease was released on the way out.
    const [lock] = await t.ds.query(
      `SELECT expires_at <= now() AS released FROM distributed_locks`,
    );
    expect(lock.released).toBe(true);
  });

  it('application shutdown waits for the row in flight, then stops claiming', async () => {
    const app = await t.start({ options: { concurrency: 1 } });
    await seedDue(4, app.clock.now());
    const release = deferred();
    app.provider.respondWith(async (message) => {
      await release.promise;
      return { providerMessageId: `p-${message.id}` };
    });

    const running = app.cycles.runCycle();
    await waitFor(() => app.provider.calls.length === 1);
    const closing = app.close();
    await sleep(50);
    release.resolve();
    await closing;
    const report = completed(await running);

    expect(report.stopReason).toBe('cancelled');
    expect(report.counts.sent).toBe(1);
    const [{ sent, untouched }] = await t.ds.query(
      `SELECT count(*) FILTER (WHERE status = 'Sent')::int AS sent,
              count(*) FILTER (WHERE attempts = 0)::int AS untouched FROM notifications`,
    );
    expect({ sent, untouched }).toEqual({ sent: 1, untouched: 3 });
    // What the host's stop line reports: the one call drained and written, the lease given back.
    expect(app.cycles.lastStop).toEqual({
      cycleInFlight: true,
      callsInFlight: 1,
      callsCut: 0,
      rowsWritten: 1,
      claimsHandedBack: 0,
      lease: 'released',
      durationMs: expect.any(Number),
    });
  });

  it('skips a tick while this instance is still running the previous cycle', async () => {
    const app = await t.start({ options: { concurrency: 1 } });
    await seedDue(2, app.clock.now());
    const release = deferred();
    app.provider.respondWith(async (message) => {
      await release.promise;
      return { providerMessageId: `p-${message.id}` };
    });

    const first = app.cycles.runCycle();
    await waitFor(() => app.provider.calls.length === 1);
    const second = await app.cycles.runCycle();
    release.resolve();
    await first;

    expect(second).toMatchObject({ status: 'skipped', skipReason: 'already-running' });
    expect(app.provider.calls).toHaveLength(2);
  });

  it('skips the tick when another instance holds the lease, touching nothing', async () => {
    const app = await t.start();
    const [id] = await seedDue(1, app.clock.now());
    await t.ds.query(
      `INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
       VALUES ('notifications:retry-worker', 'other-instance', 7, now(), now() + interval '60 seconds')`,
    );

    const report = await app.cycles.runCycle();

    expect(report).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });
    expect(app.provider.calls).toHaveLength(0);
    expect((await readNotification(t.ds, id)).attempts).toBe(0);
    expect(app.logs.events('lease-not-acquired')).toHaveLength(1);
    const [lock] = await t.ds.query(`SELECT owner, fencing_token FROM distributed_locks`);
    expect(lock).toEqual({ owner: 'other-instance', fencing_token: '7' });
  });

  it('stops claiming at the deadline; rows not reached stay untouched', async () => {
    const app = await t.start({
      options: { concurrency: 1, maxCycleDurationMs: 600, settleMarginMs: 0 },
    });
    const ids = await seedDue(20, app.clock.now());
    await t.ds.query(`UPDATE notification_channels SET timeout_ms = 100`);
    app.provider.respondWith(async (message) => {
      await sleep(60);
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.stopReason).toBe('deadline');
    expect(report.counts.sent).toBeGreaterThan(0);
    expect(report.counts.sent).toBeLessThan(ids.length);
    const [{ untouched }] = await t.ds.query(
      `SELECT count(*)::int AS untouched FROM notifications WHERE attempts = 0`,
    );
    expect(untouched).toBe(ids.length - report.counts.sent);
  });

  it('a cycle whose lease was taken over writes nothing more and stops', async () => {
    const app = await t.start({ options: { concurrency: 1 } });
    const ids = await seedDue(4, app.clock.now());
    const release = deferred();
    app.provider.respondWith(async (message) => {
      await release.promise;
      return { providerMessageId: `p-${message.id}` };
    });

    const running = app.cycles.runCycle();
    await waitFor(() => app.provider.calls.length === 1);
    // What another instance does once this one's lease has expired (a long GC pause, a frozen VM).
    await t.ds.query(
      `UPDATE distributed_locks SET owner = 'instance-b', fencing_token = fencing_token + 1,
              acquired_at = now(), expires_at = now() + interval '60 seconds'`,
    );
    release.resolve();
    const report = completed(await running);

    expect(report.stopReason).toBe('lease-lost');
    expect(report.counts).toMatchObject({ processed: 0, sent: 0 });
    expect(app.provider.calls).toHaveLength(1);
    for (const id of ids)
      expect(await readNotification(t.ds, id)).toMatchObject({ attempts: 0, sent_at: null });
    expect(await outboxEvents(t.ds)).toHaveLength(0);
    expect(app.logs.events('lease-lost')).toHaveLength(1);
    // Its release at the end leaves the new owner's lease alone.
    const [lock] = await t.ds.query(
      `SELECT owner, expires_at > now() AS held FROM distributed_locks`,
    );
    expect(lock).toEqual({ owner: 'instance-b', held: true });
  });

  it('an instance paused past its TTL writes nothing after the pause; the instance that takes over sends the row again', async () => {
    // TTL 6 s: the shortest that admits a 300 ms channel timeout next to a 200 ms cycle (5 s margin)
    // and no settle margin.
    const options = {
      concurrency: 1,
      lockTtlMs: 6_000,
      maxCycleDurationMs: 600,
      settleMarginMs: 0,
    };
    const a = await t.start({ options: { ...options, instanceId: 'instance-a' } });
    // b only takes over once a's lease has expired: its own lease and deadline can be the defaults,
    // so that a loaded machine cannot end its cycle at a 200 ms deadline before it sends anything.
    const b = await t.start({ options: { concurrency: 1, instanceId: 'instance-b' } });
    const now = a.clock.now();
    b.clock.set(now);
    await insertChannel(t.ds, { key: 'email', timeoutMs: 300 });
    const first = await insertNotification(t.ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 3),
    });
    const others = [
      await insertNotification(t.ds, { status: 'Failed', nextAttemptAt: minutesAgo(now, 2) }),
      await insertNotification(t.ds, { status: 'Failed', nextAttemptAt: minutesAgo(now, 1) }),
    ];
    a.provider.respondWith((message) => {
      // A stop-the-world pause (a long GC, a frozen VM) inside the call: no timer, socket or lease
      // renewal runs; then the provider's success arrives, as if nothing had happened.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 6_300);
      return { providerMessageId: `a-${message.id}` };
    });

    const paused = completed(await a.cycles.runCycle());

    // The call succeeded, but the lease ran out during the pause: the write is fenced off, whether
    // or not anyone took over yet, and the cycle stops.
    expect(paused).toMatchObject({ stopReason: 'lease-lost', counts: { processed: 0 } });
    expect(a.provider.calls.map((call) => call.message.id)).toEqual([first]);
    expect(await readNotification(t.ds, first)).toMatchObject({
      status: 'Failed',
      attempts: 0,
      provider_message_id: null,
    });
    expect(await outboxEvents(t.ds)).toHaveLength(0);

    // Instance b takes the lease over (the next fencing token) and sends every row, the first one
    // again, with the same idempotency key for the provider to deduplicate on.
    const overtaking = completed(await b.cycles.runCycle());
    expect(overtaking.fencingToken).toBe(paused.fencingToken + 1);
    expect(overtaking.counts).toMatchObject({ sent: 3 });
    for (const id of [first, ...others]) {
      expect((await outboxEvents(t.ds, id)).map((event) => event.payload.status)).toEqual(['Sent']);
    }
    expect(await readNotification(t.ds, first)).toMatchObject({
      status: 'Sent',
      provider_message_id: `scripted-${first}`,
    });
    expect(
      [...a.provider.calls, ...b.provider.calls]
        .filter((call) => call.message.id === first)
        .map((call) => call.idempotencyKey),
    ).toEqual([first, first]);
  });

  it('on shutdown, cuts a provider call that outlives the grace period and hands its claim back untouched', async () => {
    const app = await t.start({ options: { concurrency: 1, shutdownGraceMs: 50 } });
    await t.ds.query(`UPDATE notification_channels SET timeout_ms = 5000`);
    const [id] = await seedDue(1, app.clock.now());
    const before = await readNotification(t.ds, id);
    // A provider that ignores its signal and would only give up at the 5 s channel timeout.
    app.provider.respondWith(() => new Promise(() => undefined));

    const running = app.cycles.runCycle();
    await waitFor(() => app.provider.calls.length === 1);
    const started = Date.now();
    await app.close();
    const report = completed(await running);

    expect(Date.now() - started).toBeLessThan(2_000);
    expect(report.counts).toMatchObject({ skipped: 1, deferred: 0, retried: 0 });
    // Exactly as before the claim: due at once for another instance, no attempt used.
    expect(await readNotification(t.ds, id)).toEqual(before);
    expect(await outboxEvents(t.ds)).toHaveLength(0);
    expect(app.cycles.lastStop).toMatchObject({
      cycleInFlight: true,
      callsInFlight: 1,
      callsCut: 1,
      rowsWritten: 0,
      claimsHandedBack: 1,
      lease: 'released',
    });
  });
});
