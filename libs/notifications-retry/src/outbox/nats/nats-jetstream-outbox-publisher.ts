import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  connect,
  ErrorCode,
  Events,
  headers as natsHeaders,
  NatsError,
  type JetStreamClient,
  type NatsConnection,
} from 'nats';
import { errorText } from '../../vocabulary/error-text';
import { NOTIFICATION_DISPATCHED_TOPIC } from '../notification-dispatched-event';
import type { OutboxEvent } from '../outbox-event';
import type { OutboxPublishOutcome } from '../outbox-publish-outcome';
import { OutboxPublisher, type OutboxPublishContext } from '../outbox-publisher';
import { ensureOutboxStream } from './ensure-outbox-stream';
import type { NatsJetStreamPublisherOptions } from './nats-jetstream-publisher-options';
import {
  displayServer,
  isSubjectPrefix,
  resolveNatsPublisherOptions,
  type ResolvedNatsPublisherOptions,
} from './resolve-nats-publisher-options';

/** The event's `sequence`, for consumers that pick the latest event of a key from headers alone. */
export const SEQUENCE_HEADER = 'Pin-Sequence';

/** Errors that say this event can never be published as it is, whatever the broker's state. */
const PERMANENT_CODES = new Set<string>([
  ErrorCode.MaxPayloadExceeded,
  ErrorCode.BadSubject,
  ErrorCode.BadHeader,
  ErrorCode.BadPayload,
  ErrorCode.InvalidPayload,
]);
/** JetStream API error codes of the same kind: message larger than the stream allows. */
const PERMANENT_API_CODES = new Set<number>([10054]);

interface Connected {
  readonly connection: NatsConnection;
  readonly jetstream: JetStreamClient;
}

/**
 * Publishes outbox events to NATS JetStream: subject = [subjectPrefix.]topic,
 * payload = the event's JSON, headers = the outbox headers plus
 * `Nats-Msg-Id` = event id (JetStream drops a second copy inside the stream's
 * duplicate window), `Pin-Message-Key`, `Pin-Contract-Version` and, when the
 * event has one, `Pin-Sequence` (the notification's event number: a consumer
 * or a stream filter keeps the latest per key without parsing the payload).
 * An event is reported published only once its PubAck came back (a
 * duplicate's too).
 *
 * Connects on first use and reconnects on its own; while disconnected a batch
 * fails at once as retriable rather than being buffered by the client, so
 * nothing is sent behind the relay's back after it gave up on a batch.
 * Register it with `extensions: { outboxPublisher: { useValue: new NatsJetStreamOutboxPublisher({ servers, outboxRelay }) } }`,
 * `outboxRelay` being the same object as the module's (the stream's duplicate window must cover it).
 */
export class NatsJetStreamOutboxPublisher
  extends OutboxPublisher
  implements OnModuleInit, OnApplicationShutdown
{
  private readonly logger = new Logger('NotificationsOutboxRelay');
  private readonly options: ResolvedNatsPublisherOptions;
  private connecting: Promise<Connected> | null = null;
  private connected = false;
  private closed = false;

  constructor(options: NatsJetStreamPublisherOptions) {
    super();
    this.options = resolveNatsPublisherOptions(options);
  }

  /** The subject a topic is published on. */
  subjectFor(topic: string): string {
    return this.options.subjectPrefix ? `${this.options.subjectPrefix}.${topic}` : topic;
  }

  /**
   * Checks the broker agrees with the configuration: a stream (the configured
   * one, if any) captures the dispatched topic's subject, with a duplicate
   * window that covers the relay's republishing (created when `createStream`
   * and none exists). Unreachable: logged, start goes on, the relay retries.
   * At module init, before any relay loop starts (bootstrap hooks): Nest shuts
   * nothing down after a failed start.
   */
  async onModuleInit(): Promise<void> {
    if (!this.options.verifyAtStart || !this.options.relayEnabled) return;
    let connected: Connected;
    try {
      connected = await this.connection();
    } catch (error) {
      this.logger.warn({
        msg: 'outbox-publisher-unreachable',
        event: 'outbox-publisher-unreachable',
        servers: this.options.servers.map(displayServer),
        error: errorText(error),
      });
      return;
    }
    await this.verifyStream(connected.connection, this.subjectFor(NOTIFICATION_DISPATCHED_TOPIC));
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const pending = this.connecting;
    this.connecting = null;
    const connected = await pending?.catch(() => null);
    await connected?.connection.drain().catch(() => connected.connection.close());
  }

  async publish(
    events: readonly OutboxEvent[],
    { signal }: OutboxPublishContext,
  ): Promise<readonly OutboxPublishOutcome[]> {
    let jetstream: JetStreamClient;
    try {
      ({ jetstream } = await this.connection());
    } catch (error) {
      return events.map((event) => retriable(event, `nats-unreachable: ${errorText(error)}`));
    }
    if (!this.connected) return events.map((event) => retriable(event, 'nats-disconnected'));
    // At most one event per key in a batch (the relay's claim): they may all go out at once.
    return Promise.all(
      events.map(async (event): Promise<OutboxPublishOutcome> => {
        if (signal.aborted) return retriable(event, 'aborted-before-publish');
        const subject = this.subjectFor(event.topic);
        if (!isSubjectPrefix(subject)) {
          return { eventId: event.id, status: 'permanent', error: 'invalid-subject-for-topic' };
        }
        const h = natsHeaders();
        for (const [key, value] of Object.entries(event.headers)) h.set(key, value);
        h.set('Pin-Message-Key', event.messageKey);
        h.set('Pin-Contract-Version', String(event.contractVersion));
        if (event.sequence !== null) h.set(SEQUENCE_HEADER, String(event.sequence));
        h.set('Content-Type', 'application/json');
        try {
          await jetstream.publish(subject, Buffer.from(event.payload, 'utf8'), {
            msgID: event.id,
            timeout: this.options.ackTimeoutMs,
            headers: h,
            ...(this.options.stream ? { expect: { streamName: this.options.stream } } : {}),
          });
          return { eventId: event.id, status: 'published' };
        } catch (error) {
          return classify(event, error);
        }
      }),
    );
  }

  private connection(): Promise<Connected> {
    if (this.closed) return Promise.reject(new Error('publisher closed'));
    this.connecting ??= this.open().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    return this.connecting;
  }

  private async open(): Promise<Connected> {
    const connection = await connect({
      servers: [...this.options.servers],
      name: this.options.name,
      timeout: this.options.connectTimeoutMs,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      // The relay decides what to send again; the client's buffer would resend behind its back.
      reconnect: true,
    });
    this.connected = true;
    void (async () => {
      for await (const status of connection.status()) {
        if (status.type === Events.Disconnect) this.connected = false;
        if (status.type === Events.Reconnect) this.connected = true;
      }
    })();
    void connection.closed().then(() => {
      this.connected = false;
      if (!this.closed) this.connecting = null;
    });
    return { connection, jetstream: connection.jetstream() };
  }

  private async verifyStream(connection: NatsConnection, subject: string): Promise<void> {
    const state = await ensureOutboxStream(connection, subject, this.options);
    this.logger.log({
      msg: state.created ? 'outbox-stream-created' : 'outbox-stream-verified',
      event: state.created ? 'outbox-stream-created' : 'outbox-stream-verified',
      ...state,
    });
  }
}

function retriable(event: OutboxEvent, error: string): OutboxPublishOutcome {
  return { eventId: event.id, status: 'retriable', error };
}

function classify(event: OutboxEvent, error: unknown): OutboxPublishOutcome {
  if (!(error instanceof NatsError)) {
    return retriable(event, `nats: ${errorText(error)}`);
  }
  const api = error.api_error;
  const text = api
    ? `nats:${error.code} api ${api.err_code ?? api.code}: ${api.description}`
    : `nats:${error.code}: ${error.message}`;
  const permanent =
    PERMANENT_CODES.has(error.code) ||
    (api?.err_code !== undefined && PERMANENT_API_CODES.has(api.err_code));
  return permanent
    ? { eventId: event.id, status: 'permanent', error: text }
    : retriable(event, text);
}
