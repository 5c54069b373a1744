import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { errorText } from '../vocabulary/error-text';
import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import type { OutboxEvent } from './outbox-event';
import type { OutboxPublishOutcome } from './outbox-publish-outcome';
import { OutboxPublisher } from './outbox-publisher';
import type { OutboxRelayPass } from './outbox-relay-pass';
import { OutboxRelayMetrics } from './outbox-relay-metrics';
import { OutboxRelayRepository, type OutboxFailure } from './outbox-relay.repository';
import { OutboxWakeUp } from './outbox-wake-up';

const EMPTY_PASS: OutboxRelayPass = {
  claimed: 0,
  published: 0,
  retried: 0,
  parked: 0,
  released: 0,
  claimsLost: 0,
};

/**
 * Drains `notification_outbox` through the `OutboxPublisher`: claim a batch
 * (one short statement), publish it with no transaction open, write each
 * outcome back matched on the claim token. Published rows get `published_at`;
 * retriable failures back off; permanent ones are parked. Woken by
 * `OutboxWakeUp` after a cycle commits events, and polling otherwise.
 *
 * At-least-once: a relay that dies between the broker's acknowledgement and
 * the write leaves its claim to lapse, and the events are published again
 * with the same ids, which the broker deduplicates. Several instances may run
 * it; a row is claimed by one at a time.
 */
@Injectable()
export class NotificationsOutboxRelay
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger('NotificationsOutboxRelay');
  private stopping = false;
  private loop: Promise<void> | null = null;
  /** The batch being published now, cut by shutdown once the grace is over. */
  private readonly inFlight = new Set<AbortController>();
  private wake: (() => void) | null = null;
  private wokenEarly = false;
  private unsubscribe: (() => void) | null = null;
  private lastBacklogAt = 0;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly repository: OutboxRelayRepository,
    private readonly wakeUp: OutboxWakeUp,
    @Inject(OutboxRelayMetrics) private readonly metrics: OutboxRelayMetrics | null,
    @Optional() private readonly publisher?: OutboxPublisher,
  ) {}

  onModuleInit(): void {
    if (this.options.outboxRelay.enabled && !this.publisher) {
      throw new InvalidModuleOptionsError(
        'outboxRelay.enabled',
        true,
        'needs an OutboxPublisher: pass extensions.outboxPublisher (e.g. { useValue: new NatsJetStreamOutboxPublisher({ servers }) }), or leave the relay off',
      );
    }
  }

  onApplicationBootstrap(): void {
    if (!this.options.outboxRelay.enabled) return;
    const { batchSize, pollIntervalMs, publishTimeoutMs, claimTtlMs } = this.options.outboxRelay;
    this.unsubscribe = this.wakeUp.onEventsWritten(() => this.wakeNow());
    this.logger.log({
      msg: 'outbox-relay-started',
      event: 'outbox-relay-started',
      instanceId: this.options.instanceId,
      batchSize,
      pollIntervalMs,
      publishTimeoutMs,
      claimTtlMs,
    });
    this.loop = this.run();
  }

  /**
   * Stops claiming, lets the batch in flight finish for `shutdownGraceMs`, then
   * cuts it: its events are released at once (no backoff) for another relay.
   * Runs before the DataSource closes, so the outcomes are written.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wakeNow();
    if (!this.loop) return;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.loop.then(() => true),
      new Promise<false>(
        (resolve) => (timer = setTimeout(() => resolve(false), this.options.shutdownGraceMs)),
      ),
    ]).finally(() => clearTimeout(timer));
    if (!finished) for (const controller of this.inFlight) controller.abort(new RelayShutdown());
    await this.loop;
    this.logger.log({ msg: 'outbox-relay-stopped', event: 'outbox-relay-stopped', cut: !finished });
  }

  /**
   * One pass: claim up to `batchSize` events, publish them, write the outcomes.
   * The loop calls it; a host or a test may too (it is safe beside running relays).
   */
  async relayOnce(): Promise<OutboxRelayPass> {
    const publisher = this.publisher;
    if (!publisher) return EMPTY_PASS;
    const { batchSize, claimTtlMs, publishTimeoutMs, backoffBaseMs, backoffMaxMs } =
      this.options.outboxRelay;
    const token = randomUUID();
    const events = await this.repository.claim(token, batchSize, claimTtlMs);
    if (events.length === 0) {
      this.metrics?.passCompleted(new Date());
      return EMPTY_PASS;
    }

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new PublishTimeout()), publishTimeoutMs);
    this.inFlight.add(controller);
    const started = performance.now();
    let outcomes: ReadonlyMap<string, OutboxPublishOutcome>;
    try {
      outcomes = await this.publishBatch(publisher, events, controller.signal);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
    const durationMs = performance.now() - started;

    const published: string[] = [];
    const retriable: OutboxFailure[] = [];
    const permanent: OutboxFailure[] = [];
    const cut = controller.signal.reason instanceof RelayShutdown;
    for (const event of events) {
      const outcome = outcomes.get(event.id);
      if (outcome?.status === 'published') published.push(event.id);
      else if (outcome?.status === 'permanent')
        permanent.push({ eventId: event.id, error: outcome.error });
      else
        retriable.push({
          eventId: event.id,
          error: outcome?.status === 'retriable' ? outcome.error : 'publisher-returned-no-outcome',
        });
    }

    // Published first: it is the write that keeps an acknowledged event from going out again.
    const publishedWritten = await this.repository.markPublished(token, published);
    const released = cut
      ? await this.repository.release(
          token,
          retriable.map((failure) => failure.eventId),
        )
      : 0;
    const retriedWritten = cut
      ? 0
      : await this.repository.backOff(token, retriable, backoffBaseMs, backoffMaxMs);
    const parkedWritten = await this.repository.park(token, permanent);
    const claimsLost =
      published.length +
      retriable.length +
      permanent.length -
      (publishedWritten + released + retriedWritten + parkedWritten);

    this.metrics?.batch(publishedWritten, retriable.length, parkedWritten, durationMs);
    this.metrics?.passCompleted(new Date());
    this.report(events, permanent, retriable, cut, claimsLost, durationMs);
    return {
      claimed: events.length,
      published: publishedWritten,
      retried: retriedWritten,
      parked: parkedWritten,
      released,
      claimsLost,
    };
  }

  /** Refreshes the backlog gauges now (the loop does it at most once per poll interval). */
  async refreshBacklog(): Promise<void> {
    this.lastBacklogAt = Date.now();
    const backlog = await this.repository.backlog();
    this.metrics?.backlog(backlog);
  }

  private async run(): Promise<void> {
    const { batchSize, pollIntervalMs } = this.options.outboxRelay;
    while (!this.stopping) {
      let again = false;
      try {
        const pass = await this.relayOnce();
        // A full batch that went out: more are probably waiting. After a failure, wait for the poll.
        again = pass.claimed === batchSize && pass.retried === 0 && pass.released === 0;
        if (!again && Date.now() - this.lastBacklogAt >= pollIntervalMs) {
          await this.refreshBacklog();
        }
      } catch (error) {
        this.logger.error({
          msg: 'outbox-relay-error',
          event: 'outbox-relay-error',
          error: errorText(error),
        });
      }
      if (!again && !this.stopping) await this.sleep(pollIntervalMs);
    }
  }

  private async publishBatch(
    publisher: OutboxPublisher,
    events: readonly OutboxEvent[],
    signal: AbortSignal,
  ): Promise<ReadonlyMap<string, OutboxPublishOutcome>> {
    const byId = new Map<string, OutboxPublishOutcome>();
    let aborted: (() => void) | undefined;
    try {
      // A publisher that ignores its signal is not waited for beyond it.
      const answer = await Promise.race([
        publisher.publish(events, { signal }),
        new Promise<never>((_resolve, reject) => {
          aborted = () => reject(signal.reason as Error);
          if (signal.aborted) aborted();
          else signal.addEventListener('abort', aborted, { once: true });
        }),
      ]);
      const ids = new Set(events.map((event) => event.id));
      for (const outcome of Array.isArray(answer) ? (answer as OutboxPublishOutcome[]) : []) {
        if (outcome && ids.has(outcome.eventId) && !byId.has(outcome.eventId)) {
          byId.set(outcome.eventId, outcome);
        }
      }
    } catch (error) {
      const reason =
        error instanceof PublishTimeout || error instanceof RelayShutdown
          ? error.message
          : `publisher-error: ${errorText(error)}`;
      for (const event of events) {
        byId.set(event.id, { eventId: event.id, status: 'retriable', error: reason });
      }
    } finally {
      if (aborted) signal.removeEventListener('abort', aborted);
    }
    return byId;
  }

  private report(
    events: readonly OutboxEvent[],
    permanent: readonly OutboxFailure[],
    retriable: readonly OutboxFailure[],
    cut: boolean,
    claimsLost: number,
    durationMs: number,
  ): void {
    const topicOf = new Map(events.map((event) => [event.id, event]));
    for (const failure of permanent) {
      const event = topicOf.get(failure.eventId);
      this.logger.error({
        msg: 'outbox-event-parked',
        event: 'outbox-event-parked',
        eventId: failure.eventId,
        messageKey: event?.messageKey,
        topic: event?.topic,
        attempt: event?.attempt,
        error: failure.error,
      });
    }
    if (retriable.length > 0 && !cut) {
      this.logger.warn({
        msg: 'outbox-publish-failed',
        event: 'outbox-publish-failed',
        events: retriable.length,
        // The first reason stands for the batch: a broker outage fails them all alike.
        error: retriable[0].error,
      });
    }
    if (claimsLost > 0) {
      this.logger.warn({ msg: 'outbox-claims-lost', event: 'outbox-claims-lost', claimsLost });
    }
    this.logger.debug({
      msg: 'outbox-batch-relayed',
      event: 'outbox-batch-relayed',
      claimed: events.length,
      retried: retriable.length,
      parked: permanent.length,
      durationMs: Math.round(durationMs),
    });
  }

  private sleep(ms: number): Promise<void> {
    if (this.wokenEarly) {
      this.wokenEarly = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }

  private wakeNow(): void {
    if (this.wake) this.wake();
    else this.wokenEarly = true;
  }
}

/** The reasons a batch's signal fires; also stored as the rows' error text. */
class PublishTimeout extends Error {
  constructor() {
    super('publish-timeout');
  }
}

class RelayShutdown extends Error {
  constructor() {
    super('relay-shutdown');
  }
}
