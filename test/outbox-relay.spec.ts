import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import {
  NatsJetStreamOutboxPublisher,
  NotificationsOutboxRelay,
  OutboxMetricName,
  OutboxWakeUp,
  type OutboxPublisher,
  type OutboxRelayOptions,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { insertChannel, insertNotification, minutesAgo } from './support/fixtures';
import {
  addStream,
  consumeStream,
  deleteStream,
  startNatsServer,
  type RunningNatsServer,
} from './support/nats-server';
import {
  eventually,
  insertOutboxEvents,
  outboxRows,
  RecordingOutboxPublisher,
} from './support/outbox-fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

const TOPIC = 'pin.notifications.dispatched.v1';

interface RelayApp {
  readonly app: RetryTestApp;
  readonly relay: NotificationsOutboxRelay;
  readonly registry: Registry;
  readonly nats: NatsJetStreamOutboxPublisher;
  readonly publisher: RecordingOutboxPublisher;
  metric(name: string): Promise<number>;
  close(): Promise<void>;
}

describe('outbox relay, against a real nats-server -js and PostgreSQL', () => {
  const t = useRetryDatabase();
  let ds: DataSource;
  let nats: RunningNatsServer;
  const open: RelayApp[] = [];
  /** Each test its own subject prefix and stream, so one test's messages never show in another's. */
  let prefix: string;
  let stream: string;

  beforeAll(async () => {
    ds = t.ds;
    nats = await startNatsServer();
  });

  afterAll(async () => {
    await nats?.stop();
  });

  beforeEach(async () => {
    await ds.query(
      'TRUNCATE notifications, notification_channels, notification_outbox, distributed_locks',
    );
    const tag = randomUUID().slice(0, 8);
    prefix = `t${tag}`;
    stream = `S_${tag}`;
    await addStream(nats.url, stream, [`${prefix}.>`]);
  });

  afterEach(async () => {
    // The harness has closed the apps; this disconnects their publishers (not Nest's to close).
    for (const relayApp of open.splice(0)) await relayApp.close();
  });

  async function startRelay(
    relay: OutboxRelayOptions = {},
    publisherFor: (nats: NatsJetStreamOutboxPublisher) => OutboxPublisher = (p) => p,
  ): Promise<RelayApp> {
    const registry = new Registry();
    const natsPublisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: prefix,
      stream,
      ackTimeoutMs: 1_000,
    });
    const publisher = new RecordingOutboxPublisher(publisherFor(natsPublisher));
    const app = await t.start({
      options: {
        shutdownGraceMs: 1_000,
        metrics: { registry },
        outboxRelay: {
          enabled: true,
          pollIntervalMs: 100,
          publishTimeoutMs: 2_000,
          claimTtlMs: 4_500,
          backoffBaseMs: 100,
          backoffMaxMs: 400,
          ...relay,
        },
      },
      extensions: { outboxPublisher: { useValue: publisher } },
    });
    let closing: Promise<void> | undefined;
    const relayApp: RelayApp = {
      app,
      relay: app.module.get(NotificationsOutboxRelay),
      registry,
      nats: natsPublisher,
      publisher,
      metric: async (name) => {
        const metric = registry.getSingleMetric(name);
        const value = (await metric?.get())?.values[0]?.value;
        return value ?? Number.NaN;
      },
      close: async () => {
        closing ??= (async () => {
          await app.close();
          await natsPublisher.onApplicationShutdown();
        })();
        await closing;
      },
    };
    open.push(relayApp);
    return relayApp;
  }

  const unpublished = async (): Promise<number> =>
    (await outboxRows(ds)).filter((row) => !row.published_at && !row.parked_at).length;

  it('publishes each event once: subject from the topic, outbox headers, Nats-Msg-Id = event id', async () => {
    const ids = await insertOutboxEvents(
      ds,
      Array.from({ length: 30 }, () => ({ key: randomUUID() })),
    );
    const { metric } = await startRelay({ batchSize: 8 });

    await eventually('every event published', async () => (await unpublished()) === 0);

    const messages = await consumeStream(nats.url, stream);
    expect(messages.map((m) => m.msgId).sort()).toEqual([...ids].sort());
    const rows = await outboxRows(ds);
    const first = messages.find((m) => m.msgId === rows[0].id)!;
    expect(first.subject).toBe(`${prefix}.${TOPIC}`);
    expect(first.headers?.get('correlationId')).toBe(`corr-${rows[0].id.slice(0, 8)}`);
    expect(first.headers?.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-/);
    expect(first.headers?.get('Pin-Message-Key')).toBe(rows[0].message_key);
    expect(first.payload).toMatchObject({ notificationId: rows[0].message_key, status: 'Sent' });
    for (const row of rows) {
      expect(row.claim_token).toBeNull();
      expect(row.attempts).toBe(1);
    }
    expect(await metric(OutboxMetricName.published)).toBe(30);
    expect(await metric(OutboxMetricName.publishFailures)).toBe(0);
  });

  it('sets published_at only after the PubAck: while no stream stores the subject nothing is marked published, and each event goes out once the stream is back', async () => {
    const { metric } = await startRelay();
    // Verified at start; from now on a publish on the prefix is stored by no stream, so no PubAck comes.
    await deleteStream(nats.url, stream);
    const ids = await insertOutboxEvents(
      ds,
      Array.from({ length: 6 }, () => ({ key: randomUUID() })),
    );

    // Tried twice, or marked published (what a publisher that did not await the PubAck does at once).
    await eventually('every event tried again after a refusal', async () => {
      const rows = await outboxRows(ds);
      return rows.every((row) => row.attempts >= 2 || row.published_at !== null);
    });
    const refused = await outboxRows(ds);
    expect(refused.filter((row) => row.published_at !== null || row.parked_at !== null)).toEqual(
      [],
    );
    for (const row of refused) expect(row.last_error).toMatch(/^nats/);
    expect(refused).toHaveLength(ids.length);
    expect(await metric(OutboxMetricName.published)).toBe(0);
    expect(await metric(OutboxMetricName.publishFailures)).toBeGreaterThanOrEqual(6);

    await addStream(nats.url, stream, [`${prefix}.>`]);
    await eventually(
      'published once the stream stores them',
      async () => (await unpublished()) === 0,
    );
    const messages = await consumeStream(nats.url, stream);
    expect(messages.map((m) => m.msgId).sort()).toEqual([...ids].sort());
    expect(await metric(OutboxMetricName.published)).toBe(6);
  });

  it('is woken by the cycle that wrote a final event: published long before the next poll', async () => {
    const relayApp = await startRelay({ pollIntervalMs: 120_000 });
    const { app } = relayApp;
    app.provider.respondWith((message) => ({ providerMessageId: `scripted-${message.id}` }));
    await insertChannel(ds, { key: 'email' });
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });
    // The relay's first pass at start found nothing; the next poll is two minutes away.
    await eventually(
      'the first, empty pass',
      async () => (await relayApp.metric(OutboxMetricName.lastRelayPass)) > 0,
    );
    expect(relayApp.publisher.batches).toHaveLength(0);
    const wakeUp = jest.spyOn(app.module.get(OutboxWakeUp), 'eventsWritten');

    await app.cycles.runCycle();
    // The cycle that committed the event told the relay so.
    expect(wakeUp).toHaveBeenCalled();

    await eventually(
      "the cycle's event published",
      async () => (await unpublished()) === 0 && (await outboxRows(ds)).length === 1,
      15_000,
    );
    const messages = await consumeStream(nats.url, stream);
    expect(messages).toHaveLength(1);
    expect(messages[0].payload).toMatchObject({ notificationId: id, status: 'Sent' });
    // One woken pass published it: no poll came between (the next is two minutes away).
    expect(relayApp.publisher.batches).toHaveLength(1);
    wakeUp.mockRestore();
  });

  it('publishes the event’s sequence in the payload and as Pin-Sequence; an event without an integer one gets no header', async () => {
    const relayApp = await startRelay();
    const { app, publisher } = relayApp;
    await insertChannel(ds, { key: 'email' });
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });
    // The row's third event: two went out in earlier episodes.
    await ds.query(`UPDATE notifications SET event_sequence = 2 WHERE id = $1`, [id]);
    // Events of another writer: one from before the field existed, one with a sequence that is no integer.
    const [unnumbered, garbled] = await insertOutboxEvents(ds, [
      { key: randomUUID(), sequence: null },
      { key: randomUUID(), sequence: 1.5 },
    ]);

    completed(await app.cycles.runCycle());
    await eventually(
      'every event published',
      async () => (await unpublished()) === 0 && (await outboxRows(ds)).length === 3,
      15_000,
    );

    const messages = await consumeStream(nats.url, stream);
    const fromCycle = messages.find((m) => m.headers?.get('Pin-Message-Key') === id)!;
    expect(fromCycle.payload).toMatchObject({ notificationId: id, status: 'Sent', sequence: 3 });
    expect(fromCycle.headers?.get('Pin-Sequence')).toBe('3');
    for (const eventId of [unnumbered, garbled]) {
      const message = messages.find((m) => m.msgId === eventId)!;
      expect(message.headers?.has('Pin-Sequence')).toBe(false);
    }
    // What a publisher other than NATS is handed: the sequence, read by the claim.
    const handed = new Map(publisher.batches.flat().map((event) => [event.id, event.sequence]));
    expect(handed.get(fromCycle.msgId!)).toBe(3);
    expect(handed.get(unnumbered)).toBeNull();
    expect(handed.get(garbled)).toBeNull();
  });

  it("keeps created_at order within a key, one event of a key in flight at a time, even when a key's head fails", async () => {
    const base = Date.now() - 60_000;
    const keys = Array.from({ length: 4 }, () => randomUUID());
    const fixtures = keys.flatMap((key, k) =>
      Array.from({ length: 5 }, (_, i) => ({ key, createdAt: new Date(base + i * 1_000 + k) })),
    );
    // Inserted in reverse, so insertion order and created_at disagree.
    const ids = await insertOutboxEvents(ds, [...fixtures].reverse());
    const headOfFirstKey = ids[ids.length - 1];
    let failuresLeft = 2;
    const { publisher } = await startRelay({ batchSize: 50 }, (p) => p);
    publisher.decide = (event) =>
      event.id === headOfFirstKey && failuresLeft-- > 0
        ? { eventId: event.id, status: 'retriable', error: 'test: broker busy' }
        : null;

    await eventually('every event published', async () => (await unpublished()) === 0);

    for (const batch of publisher.batches) {
      const batchKeys = batch.map((event) => event.messageKey);
      expect(new Set(batchKeys).size).toBe(batchKeys.length);
    }
    const messages = await consumeStream(nats.url, stream);
    const rows = await outboxRows(ds);
    for (const key of keys) {
      const expected = rows.filter((row) => row.message_key === key).map((row) => row.id);
      const received = messages
        .filter((m) => (m.payload as { notificationId: string }).notificationId === key)
        .sort((a, b) => a.seq - b.seq)
        .map((m) => m.msgId);
      expect(received).toEqual(expected);
    }
    expect(rows.find((row) => row.id === headOfFirstKey)?.attempts).toBe(3);
  });

  it('two relays at once: no event handed to two publishers, each id once at the consumer', async () => {
    const fixtures = Array.from({ length: 200 }, (_, i) => ({
      key: `key-${i % 120}`,
      createdAt: new Date(Date.now() - 100_000 + i),
    }));
    const ids = await insertOutboxEvents(ds, fixtures);
    const [a, b] = await Promise.all([
      startRelay({ batchSize: 10 }),
      startRelay({ batchSize: 10 }),
    ]);

    await eventually('every event published', async () => (await unpublished()) === 0);

    const handed = [...a.publisher.publishedIds, ...b.publisher.publishedIds];
    expect(handed.sort()).toEqual([...ids].sort());
    const messages = await consumeStream(nats.url, stream);
    expect(messages.map((m) => m.msgId).sort()).toEqual([...ids].sort());
    // Per key, the stream's order is created_at order whichever relay sent each event.
    const rows = await outboxRows(ds);
    const seqOf = new Map(messages.map((m) => [m.msgId, m.seq]));
    for (let key = 0; key < 120; key++) {
      const ordered = rows
        .filter((row) => row.message_key === `key-${key}`)
        .map((row) => seqOf.get(row.id)!);
      expect(ordered).toEqual([...ordered].sort((x, y) => x - y));
    }
  });

  it("parks a permanently failing event with its error and counts it, while the others, its key's later events included, go out", async () => {
    const key = randomUUID();
    const now = Date.now();
    const [poisoned, sameKeyLater] = await insertOutboxEvents(ds, [
      { key, createdAt: new Date(now - 10_000) },
      { key, createdAt: new Date(now - 9_000) },
    ]);
    const others = await insertOutboxEvents(
      ds,
      Array.from({ length: 5 }, () => ({ key: randomUUID() })),
    );
    const { publisher, metric, relay } = await startRelay();
    publisher.decide = (event) =>
      event.id === poisoned
        ? { eventId: event.id, status: 'permanent', error: 'test: refused by broker (code 10054)' }
        : null;

    await eventually('all but the parked one published', async () => (await unpublished()) === 0);

    const rows = await outboxRows(ds);
    const parked = rows.find((row) => row.id === poisoned)!;
    expect(parked.parked_at).not.toBeNull();
    expect(parked.published_at).toBeNull();
    expect(parked.last_error).toBe('test: refused by broker (code 10054)');
    const messages = await consumeStream(nats.url, stream);
    expect(messages.map((m) => m.msgId).sort()).toEqual([sameKeyLater, ...others].sort());
    expect(await metric(OutboxMetricName.parked)).toBe(1);
    await relay.refreshBacklog();
    expect(await metric(OutboxMetricName.parkedRows)).toBe(1);
    expect(await metric(OutboxMetricName.unpublishedRows)).toBe(0);
  });

  it('a message larger than the server allows is parked by the NATS publisher itself', async () => {
    const small = await startNatsServer({ maxPayload: 4_096 });
    try {
      await addStream(small.url, 'SMALL', ['small.>']);
      const publisher = new NatsJetStreamOutboxPublisher({
        servers: small.url,
        subjectPrefix: 'small',
      });
      const [big, fine] = await insertOutboxEvents(ds, [
        { key: randomUUID(), padding: 10_000 },
        { key: randomUUID() },
      ]);
      const app = await t.start({
        options: {
          metrics: { registry: new Registry() },
          outboxRelay: { enabled: true, pollIntervalMs: 100 },
        },
        extensions: { outboxPublisher: { useValue: publisher } },
      });
      try {
        await eventually(
          'the small one published, the big one parked',
          async () => (await unpublished()) === 0,
        );
      } finally {
        // The relay stops before the publisher it was given (not Nest's to close) disconnects.
        await app.close();
        await publisher.onApplicationShutdown();
      }
      const rows = await outboxRows(ds);
      expect(rows.find((row) => row.id === big)?.parked_at).not.toBeNull();
      expect(rows.find((row) => row.id === big)?.last_error).toMatch(/MAX_PAYLOAD_EXCEEDED/);
      expect(rows.find((row) => row.id === fine)?.published_at).not.toBeNull();
      expect((await consumeStream(small.url, 'SMALL')).map((m) => m.msgId)).toEqual([fine]);
    } finally {
      await small.stop();
    }
  });

  it('graceful shutdown lets the batch in flight finish; one that outlives the grace is cut and released at once', async () => {
    const slowIds = await insertOutboxEvents(
      ds,
      Array.from({ length: 3 }, () => ({ key: randomUUID() })),
    );
    const slow = await startRelay({}, (p) => p);
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    const publish = slow.publisher.publish.bind(slow.publisher);
    slow.publisher.publish = async (events, context) => {
      entered();
      await new Promise((resolve) => setTimeout(resolve, 400));
      return publish(events, context);
    };
    await inFlight;
    await slow.close();
    const drained = await outboxRows(ds);
    expect(drained.filter((row) => slowIds.includes(row.id)).every((row) => row.published_at)).toBe(
      true,
    );
    expect(slow.app.logs.events('outbox-relay-stopped')).toEqual([
      expect.objectContaining({ cut: false }),
    ]);

    const [stuck] = await insertOutboxEvents(ds, [{ key: randomUUID() }]);
    const hung = await startRelay({ publishTimeoutMs: 20_000, claimTtlMs: 30_000 }, (p) => p);
    let hungEntered!: () => void;
    const hungInFlight = new Promise<void>((resolve) => (hungEntered = resolve));
    // Ignores its signal and never answers: only the grace (1 s) ends the wait.
    hung.publisher.publish = () => {
      hungEntered();
      return new Promise(() => undefined);
    };
    await hungInFlight;
    await hung.close();
    const released = (await outboxRows(ds)).find((row) => row.id === stuck)!;
    expect(released).toMatchObject({
      published_at: null,
      claim_token: null,
      next_attempt_at: null,
      parked_at: null,
    });
    expect(hung.app.logs.events('outbox-relay-stopped')).toEqual([
      expect.objectContaining({ cut: true }),
    ]);
  });

  it('NATS down: the backlog grows, the gauges and failure counter say so, nothing is lost, and it drains when NATS is back', async () => {
    const { metric, relay } = await startRelay();
    await nats.kill();
    try {
      const ids = await insertOutboxEvents(
        ds,
        Array.from({ length: 20 }, (_, i) => ({
          key: `k-${i % 7}`,
          createdAt: new Date(Date.now() - 60_000 + i),
        })),
      );
      await eventually('failures recorded on the rows', async () => {
        const rows = await outboxRows(ds);
        return rows.filter((row) => row.last_error !== null).length >= 7;
      });
      await relay.refreshBacklog();
      expect(await metric(OutboxMetricName.unpublishedRows)).toBe(20);
      expect(await metric(OutboxMetricName.oldestUnpublishedAge)).toBeGreaterThanOrEqual(59);
      expect(await metric(OutboxMetricName.publishFailures)).toBeGreaterThan(0);
      expect(await metric(OutboxMetricName.published)).toBe(0);
      const rows = await outboxRows(ds);
      expect(rows.every((row) => row.published_at === null && row.parked_at === null)).toBe(true);
      expect(rows.find((row) => row.last_error)?.last_error).toMatch(/^nats/);

      await nats.start();
      await eventually(
        'drained once NATS is back',
        async () => (await unpublished()) === 0,
        45_000,
      );
      const messages = await consumeStream(nats.url, stream);
      expect(messages.map((m) => m.msgId).sort()).toEqual([...ids].sort());
      await relay.refreshBacklog();
      expect(await metric(OutboxMetricName.unpublishedRows)).toBe(0);
      expect(await metric(OutboxMetricName.published)).toBe(20);
    } finally {
      await nats.start().catch(() => undefined);
    }
  });
});
