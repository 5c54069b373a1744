/**
 * A relay that is killed (SIGKILL, by itself) right after JetStream
 * acknowledged its first batch and before `published_at` is written: the
 * crash the broker's deduplication is for. Run as a child process by
 * outbox-relay.kill.spec.ts:
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register test/outbox-relay.kill-child.ts
 *
 * DATABASE_URL, NATS_URL, SUBJECT_PREFIX, STREAM: where to work. Prints `published <n>` first.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  NatsJetStreamOutboxPublisher,
  NotificationsRetryModule,
  OutboxPublisher,
  type OutboxEvent,
  type OutboxPublishContext,
  type OutboxPublishOutcome,
} from '@pin/notifications-retry';
import { dataSourceOptions } from './support/test-database';

class KilledAfterAckPublisher extends OutboxPublisher {
  constructor(private readonly inner: OutboxPublisher) {
    super();
  }

  async publish(
    events: readonly OutboxEvent[],
    context: OutboxPublishContext,
  ): Promise<readonly OutboxPublishOutcome[]> {
    const outcomes = await this.inner.publish(events, context);
    const published = outcomes.filter((outcome) => outcome.status === 'published').length;
    process.stdout.write(`published ${published}\n`, () => process.kill(process.pid, 'SIGKILL'));
    // Never answers: the process dies before the relay could write anything.
    return new Promise(() => undefined);
  }
}

async function main(): Promise<void> {
  const nats = new NatsJetStreamOutboxPublisher({
    servers: process.env.NATS_URL!,
    subjectPrefix: process.env.SUBJECT_PREFIX,
    stream: process.env.STREAM,
  });
  @Module({
    imports: [
      ScheduleModule.forRoot(),
      TypeOrmModule.forRoot(dataSourceOptions(process.env.DATABASE_URL!)),
      NotificationsRetryModule.forRoot({
        enabled: false,
        outboxRelay: {
          enabled: true,
          batchSize: 1_000,
          pollIntervalMs: 100,
          publishTimeoutMs: 5_000,
          claimTtlMs: 8_000,
        },
        extensions: { outboxPublisher: { useValue: new KilledAfterAckPublisher(nats) } },
      }),
    ],
  })
  class KilledRelayModule {}
  const app = await NestFactory.createApplicationContext(KilledRelayModule, { logger: ['error'] });
  await app.init();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
