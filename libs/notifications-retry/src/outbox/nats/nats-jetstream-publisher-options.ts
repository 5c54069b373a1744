import type { OutboxRelayOptions } from '../../options/outbox-relay-options';

/** Options of the built-in `NatsJetStreamOutboxPublisher`. */
export interface NatsJetStreamPublisherOptions {
  /** One or more `nats://host:port` (or `tls://`) URLs; credentials may be in the URL. */
  servers: string | readonly string[];
  /**
   * Put before each topic, with a dot: `pin` publishes `pin.notifications.dispatched.v1`
   * on `pin.pin.notifications.dispatched.v1`. Dot-separated tokens of letters,
   * digits, `_` and `-`; no wildcards. Default none: the subject is the topic.
   */
  subjectPrefix?: string;
  /**
   * The JetStream stream that must capture the subjects. Checked at start when
   * the broker is reachable, and sent with every publish (the server refuses a
   * message another stream would take). Default: whichever stream captures them.
   */
  stream?: string;
  /** Connection name shown by the server. Default `pin-notifications-outbox`. */
  name?: string;
  /** Default 5 000. */
  connectTimeoutMs?: number;
  /** How long to wait for one PubAck. Default 5 000; keep it under the relay's publishTimeoutMs. */
  ackTimeoutMs?: number;
  /**
   * At start, connect and check that a stream captures the subjects; a broker
   * that says none does stops start-up. An unreachable broker is only logged
   * (the relay retries). Default true.
   */
  verifyAtStart?: boolean;
  /**
   * At start, create `stream` (the `stream` option is required with this) when no stream captures the subject: file
   * storage, limits retention, one replica, and a duplicate window covering the relay's
   * (claimTtlMs + 1.2 × backoffMaxMs + pollIntervalMs, at least JetStream's default 2 min). An
   * existing stream is never changed. Default false: streams are usually made by their owners.
   */
  createStream?: boolean;
  /**
   * The module's `outboxRelay` options (as given to forRoot): the stream's duplicate window must
   * cover how long the relay may take to send an event again. Default: the relay's defaults. When
   * they say the relay is off (`enabled: false`), nothing is checked or created at start.
   */
  outboxRelay?: OutboxRelayOptions;
}
