import { Client, type QueryConfig } from 'pg';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import {
  InvalidModuleOptionsError,
  InvalidOutboxPublisherOptionsError,
  NatsJetStreamOutboxPublisher,
  OutboxRetention,
} from '@pin/notifications-retry';
import { millis } from 'nats';
import {
  addStream,
  startNatsServer,
  streamInfo,
  type RunningNatsServer,
} from './support/nats-server';
import { insertOutboxEvents, outboxRows } from './support/outbox-fixtures';
import { useRetryDatabase } from './support/retry-test-app';

const DAY_MS = 86_400_000;

describe('outbox retention and the relay configuration', () => {
  const t = useRetryDatabase();
  let ds: DataSource;
  let nats: RunningNatsServer;

  beforeAll(async () => {
    ds = t.ds;
    nats = await startNatsServer();
    await addStream(nats.url, 'PIN', ['pin.>']);
  });

  afterAll(async () => {
    await nats?.stop();
  });

  beforeEach(() => ds.query('TRUNCATE notification_outbox'));

  /** Starts a relay with this publisher and expects start-up to stop with `message`; the publisher is closed either way. */
  async function expectStartRefused(
    options: ConstructorParameters<typeof NatsJetStreamOutboxPublisher>[0],
    message: string | RegExp,
  ): Promise<void> {
    const publisher = new NatsJetStreamOutboxPublisher(options);
    try {
      await expect(
        t.start({
          options: { metrics: { registry: new Registry() }, outboxRelay: { enabled: true } },
          extensions: { outboxPublisher: { useValue: publisher } },
        }),
      ).rejects.toThrow(message);
    } finally {
      await publisher.onApplicationShutdown();
    }
  }

  it('retention deletes published rows older than retentionMs, in small batches, and never parked or unpublished ones', async () => {
    const now = Date.now();
    const old = new Date(now - 10 * DAY_MS);
    const oldPublished = await insertOutboxEvents(
      ds,
      Array.from({ length: 5 }, () => ({
        key: randomUUID(),
        createdAt: old,
        publishedAt: new Date(now - 9 * DAY_MS),
      })),
    );
    const kept = await insertOutboxEvents(ds, [
      { key: randomUUID(), createdAt: old, publishedAt: new Date(now - 3_600_000) },
      { key: randomUUID(), createdAt: old, parkedAt: old },
      { key: randomUUID(), createdAt: old },
    ]);
    const app = await t.start({
      // The relay is off: retention is a method any instance may call; the timer runs only with the relay.
      options: { outboxRelay: { retentionMs: 7 * DAY_MS, retentionBatchSize: 2 } },
    });
    const deleteStatements: string[] = [];
    // Every statement the app sends, observed on the pg client (a spy that calls through).
    const spy = jest.spyOn(Client.prototype, 'query');
    try {
      const retention = app.module.get(OutboxRetention);
      expect(await retention.runOnce()).toBe(5);
      expect(await retention.runOnce()).toBe(0);
      for (const [config] of spy.mock.calls as unknown[][]) {
        const text = typeof config === 'string' ? config : (config as QueryConfig).text;
        if (/^\s*DELETE FROM "?notification_outbox"?/.test(text)) deleteStatements.push(text);
      }
    } finally {
      spy.mockRestore();
    }
    // 2 + 2 + 1, then the empty second run.
    expect(deleteStatements).toHaveLength(4);
    const left = (await outboxRows(ds)).map((row) => row.id).sort();
    expect(left).toEqual([...kept].sort());
    expect(left.some((id) => oldPublished.includes(id))).toBe(false);
  });

  it('a relay enabled without a publisher stops start-up naming the option', async () => {
    await expect(t.start({ options: { outboxRelay: { enabled: true } } })).rejects.toThrow(
      new InvalidModuleOptionsError(
        'outboxRelay.enabled',
        true,
        'needs an OutboxPublisher: pass extensions.outboxPublisher (e.g. { useValue: new NatsJetStreamOutboxPublisher({ servers }) }), or leave the relay off',
      ),
    );
  });

  it('a subject prefix no stream captures stops start-up naming the stream and the subject, not the servers', async () => {
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: 'nowhere',
    });
    try {
      const start = t.start({
        options: { metrics: { registry: new Registry() }, outboxRelay: { enabled: true } },
        extensions: { outboxPublisher: { useValue: publisher } },
      });
      await expect(start).rejects.toBeInstanceOf(InvalidOutboxPublisherOptionsError);
      const error = await start.then(
        () => null,
        (thrown: Error) => thrown,
      );
      expect(error?.message).toMatch(
        /^NatsJetStreamOutboxPublisher option "stream" must name a JetStream stream that captures the subject "nowhere\.pin\.notifications\.dispatched\.v1" \(subjectPrefix "nowhere" \+ the topic\), and none on the broker does \(.+\): create it \(nats stream add PIN_NOTIFICATIONS --subjects 'nowhere\.pin\.notifications\.>' --dupe-window 2m --defaults\), pass createStream: true, or fix the prefix; got no stream option$/,
      );
      expect(error?.message).not.toContain('servers');
      expect(error?.message).not.toContain(nats.url);
    } finally {
      await publisher.onApplicationShutdown();
    }
  });

  it('a configured stream that does not exist is named with the subject it should capture', async () => {
    await expectStartRefused(
      {
        servers: nats.url,
        subjectPrefix: 'missing',
        stream: 'MISSING_STREAM',
      },
      /option "stream" must name a JetStream stream that captures the subject "missing\.pin\.notifications\.dispatched\.v1" .*\(stream "MISSING_STREAM" does not exist; .*nats stream add MISSING_STREAM --subjects 'missing\.pin\.notifications\.>'.*; got "MISSING_STREAM"$/,
    );
  });

  it('createStream makes the missing stream at start, its duplicate window covering claim TTL + backoff max + poll', async () => {
    const outboxRelay = {
      enabled: true,
      claimTtlMs: 100_000,
      backoffMaxMs: 60_000,
      pollIntervalMs: 5_000,
    };
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: 'made',
      stream: 'MADE_AT_START',
      createStream: true,
      outboxRelay,
    });
    const app = await t.start({
      options: { metrics: { registry: new Registry() }, outboxRelay },
      extensions: { outboxPublisher: { useValue: publisher } },
    });
    try {
      const info = await streamInfo(nats.url, 'MADE_AT_START');
      expect(info.config.subjects).toEqual(['made.pin.notifications.>']);
      // 100 000 + 60 000 × 1.2 + 5 000: over JetStream's 2 min default.
      expect(millis(info.config.duplicate_window)).toBe(177_000);
      expect(app.logs.events('outbox-stream-created')[0]).toMatchObject({
        stream: 'MADE_AT_START',
        subjects: ['made.pin.notifications.>'],
        duplicateWindowMs: 177_000,
      });
    } finally {
      // The relay stops before the publisher it was given (not Nest's to close) disconnects.
      await app.close();
      await publisher.onApplicationShutdown();
    }
  });

  it('createStream does not take over a stream of that name that captures other subjects', async () => {
    await addStream(nats.url, 'TAKEN', ['elsewhere.>']);
    await expectStartRefused(
      {
        servers: nats.url,
        subjectPrefix: 'taken',
        stream: 'TAKEN',
        createStream: true,
      },
      /^NatsJetStreamOutboxPublisher option "createStream" could not create the stream "TAKEN" capturing \["taken\.pin\.notifications\.>"\] \(.+\): add those subjects to it, or name another stream; got true$/,
    );
    expect((await streamInfo(nats.url, 'TAKEN')).config.subjects).toEqual(['elsewhere.>']);
  });

  it('a stream whose duplicate window is shorter than the relay needs is refused, naming both windows', async () => {
    await addStream(nats.url, 'SHORT_WINDOW', ['short.>'], 60_000);
    await expectStartRefused(
      {
        servers: nats.url,
        subjectPrefix: 'short',
        stream: 'SHORT_WINDOW',
      },
      'NatsJetStreamOutboxPublisher option "stream" must keep a duplicate_window of at least 1m47s (107000 ms = outboxRelay.claimTtlMs 30000 + outboxRelay.backoffMaxMs 60000 × 1.2 (jitter) + outboxRelay.pollIntervalMs 5000), or a copy the relay sends again after that passes JetStream\'s deduplication: widen it (nats stream edit SHORT_WINDOW --dupe-window 1m47s) or shorten those relay options; got "SHORT_WINDOW", whose duplicate_window is 1m (60000 ms)',
    );
  });

  it('a stream that is not the one capturing the subjects stops start-up', async () => {
    await expectStartRefused(
      {
        servers: nats.url,
        subjectPrefix: 'pin',
        stream: 'OTHER',
      },
      'NatsJetStreamOutboxPublisher option "stream" must be the stream that captures "pin.pin.notifications.dispatched.v1", which is "PIN"; got "OTHER"',
    );
  });

  it('where the relay options say it is off, the start checks and creates nothing (an ops process)', async () => {
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: 'off',
      stream: 'NOT_MADE',
      createStream: true,
      outboxRelay: { enabled: false },
    });
    try {
      await publisher.onModuleInit();
      await expect(streamInfo(nats.url, 'NOT_MADE')).rejects.toThrow(/stream not found/);
    } finally {
      await publisher.onApplicationShutdown();
    }
  });

  it('an unreachable broker at start is logged, not fatal: the relay retries', async () => {
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: 'nats://127.0.0.1:1',
      connectTimeoutMs: 500,
    });
    const app = await t.start({
      options: {
        metrics: { registry: new Registry() },
        outboxRelay: { enabled: true, pollIntervalMs: 60_000 },
      },
      extensions: { outboxPublisher: { useValue: publisher } },
    });
    try {
      const warning = app.logs.events('outbox-publisher-unreachable')[0];
      expect(warning).toMatchObject({ servers: ['"nats://127.0.0.1:1"'] });
    } finally {
      // The relay stops before the publisher it was given (not Nest's to close) disconnects.
      await app.close();
      await publisher.onApplicationShutdown();
    }
  });
});
