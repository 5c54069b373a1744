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
import { addStream, startNatsServer, type RunningNatsServer } from './support/nats-server';
import { insertOutboxEvents, outboxRows } from './support/outbox-fixtures';
import { createRetryTestApp } from './support/retry-test-app';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

const DAY_MS = 86_400_000;

describe('outbox retention and the relay configuration', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let nats: RunningNatsServer;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    nats = await startNatsServer();
    await addStream(nats.url, 'PIN', ['pin.>']);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
    await nats?.stop();
  });

  beforeEach(() => ds.query('TRUNCATE notification_outbox'));

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
    const app = await createRetryTestApp({
      url: db.url,
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
        if (/^\s*DELETE FROM notification_outbox/.test(text)) deleteStatements.push(text);
      }
    } finally {
      spy.mockRestore();
      await app.close();
    }
    // 2 + 2 + 1, then the empty second run.
    expect(deleteStatements).toHaveLength(4);
    const left = (await outboxRows(ds)).map((row) => row.id).sort();
    expect(left).toEqual([...kept].sort());
    expect(left.some((id) => oldPublished.includes(id))).toBe(false);
  });

  it('a relay enabled without a publisher stops start-up naming the option', async () => {
    await expect(
      createRetryTestApp({ url: db.url, options: { outboxRelay: { enabled: true } } }),
    ).rejects.toThrow(
      new InvalidModuleOptionsError(
        'outboxRelay.enabled',
        true,
        'needs an OutboxPublisher: pass extensions.outboxPublisher (e.g. { useValue: new NatsJetStreamOutboxPublisher({ servers }) }), or leave the relay off',
      ),
    );
  });

  it('a subject prefix no stream captures stops start-up when the broker is reachable', async () => {
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: 'nowhere',
    });
    try {
      const start = createRetryTestApp({
        url: db.url,
        options: { metrics: { registry: new Registry() }, outboxRelay: { enabled: true } },
        extensions: { outboxPublisher: { useValue: publisher } },
      });
      await expect(start).rejects.toBeInstanceOf(InvalidOutboxPublisherOptionsError);
      await expect(start).rejects.toThrow(
        /NatsJetStreamOutboxPublisher option "subjectPrefix" gives the subject "nowhere\.pin\.notifications\.dispatched\.v1", which no JetStream stream on the broker captures .*; got "nowhere"/,
      );
    } finally {
      await publisher.onApplicationShutdown();
    }
  });

  it('a stream that is not the one capturing the subjects stops start-up', async () => {
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: 'pin',
      stream: 'OTHER',
    });
    try {
      await expect(
        createRetryTestApp({
          url: db.url,
          options: { metrics: { registry: new Registry() }, outboxRelay: { enabled: true } },
          extensions: { outboxPublisher: { useValue: publisher } },
        }),
      ).rejects.toThrow(
        'NatsJetStreamOutboxPublisher option "stream" must be the stream that captures "pin.pin.notifications.dispatched.v1", which is "PIN"; got "OTHER"',
      );
    } finally {
      await publisher.onApplicationShutdown();
    }
  });

  it('an unreachable broker at start is logged, not fatal: the relay retries', async () => {
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: 'nats://127.0.0.1:1',
      connectTimeoutMs: 500,
    });
    const app = await createRetryTestApp({
      url: db.url,
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
      await app.close();
      await publisher.onApplicationShutdown();
    }
  });
});
