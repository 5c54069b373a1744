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
}
