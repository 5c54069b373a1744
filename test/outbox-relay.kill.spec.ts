import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { NatsJetStreamOutboxPublisher } from '@pin/notifications-retry';
import {
  addStream,
  consumeStream,
  startNatsServer,
  type RunningNatsServer,
} from './support/nats-server';
import {
  eventually,
  insertOutboxEvents,
  outboxRows,
  RecordingOutboxPublisher,
} from './support/outbox-fixtures';
import { useRetryDatabase } from './support/retry-test-app';

const CHILD = join(__dirname, 'outbox-relay.kill-child.ts');

describe('outbox relay killed between the broker ack and published_at', () => {
  const t = useRetryDatabase();
  let nats: RunningNatsServer;

  beforeAll(async () => {
    nats = await startNatsServer();
    await addStream(nats.url, 'KILL', ['kill.>']);
  });

  afterAll(async () => {
    await nats?.stop();
  });

  it('publishes again after the claim lapses and the consumer still gets each event id once', async () => {
    const { db, ds } = t;
    const ids = await insertOutboxEvents(
      ds,
      Array.from({ length: 25 }, (_, i) => ({
        key: `key-${i % 25}`,
        createdAt: new Date(Date.now() - 60_000 + i),
      })),
    );

    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', CHILD],
      {
        cwd: join(__dirname, '..'),
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          NATS_URL: nats.url,
          SUBJECT_PREFIX: 'kill',
          STREAM: 'KILL',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, exitSignal) => resolve(exitSignal)),
    );
    expect({ signal, output }).toEqual({ signal: 'SIGKILL', output: 'published 25\n' });

    // The broker has every event; the database says none went out, and the claims are still there.
    expect((await consumeStream(nats.url, 'KILL')).map((m) => m.msgId).sort()).toEqual(
      [...ids].sort(),
    );
    const claimed = await outboxRows(ds);
    expect(claimed.every((row) => row.published_at === null && row.claim_token !== null)).toBe(
      true,
    );

    const natsPublisher = new NatsJetStreamOutboxPublisher({
      servers: nats.url,
      subjectPrefix: 'kill',
      stream: 'KILL',
    });
    const publisher = new RecordingOutboxPublisher(natsPublisher);
    const app = await t.start({
      options: {
        metrics: { registry: new Registry() },
        outboxRelay: { enabled: true, pollIntervalMs: 100 },
      },
      extensions: { outboxPublisher: { useValue: publisher } },
    });
    try {
      await eventually(
        "published by the second relay once the dead one's claims lapsed",
        async () => (await outboxRows(ds)).every((row) => row.published_at !== null),
        45_000,
      );
    } finally {
      // The relay stops before the publisher it was given (not Nest's to close) disconnects.
      await app.close();
      await natsPublisher.onApplicationShutdown();
    }
    // Sent again in full (JetStream acknowledged them as duplicates) ...
    expect([...publisher.publishedIds].sort()).toEqual([...ids].sort());
    // ... and still once each at the consumer.
    const messages = await consumeStream(nats.url, 'KILL');
    expect(messages).toHaveLength(25);
    expect(new Set(messages.map((m) => m.msgId)).size).toBe(25);
    expect((await outboxRows(ds)).every((row) => row.attempts === 2)).toBe(true);
  });
});
