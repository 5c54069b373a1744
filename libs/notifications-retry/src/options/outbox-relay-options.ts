/** `outboxRelay` option of `NotificationsRetryModule`: the relay that drains `notification_outbox`. */
export interface OutboxRelayOptions {
  /** Run the relay in this instance (several instances may). Default false. Needs `extensions.outboxPublisher`. */
  enabled?: boolean;
  /** Events claimed and handed to the publisher at once (at most one per message key). Default 100. */
  batchSize?: number;
  /** How often the relay looks for events when nothing woke it. Default 5 000. */
  pollIntervalMs?: number;
  /** How long one `publish` call may take before its signal fires and its events count as retriable. Default 10 000. */
  publishTimeoutMs?: number;
  /**
   * How long a claim holds its rows: a relay that died (or stalled) with rows
   * claimed leaves them to others after this. Must exceed `publishTimeoutMs`
   * + 2 000 so that the write after a publish happens inside the claim.
   * Default 30 000.
   */
  claimTtlMs?: number;
  /** Backoff of a retriable failure: base × 2^(attempts − 1), ±20 % jitter, capped. Defaults 1 000 and 60 000. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Published rows older than this are deleted; parked and unpublished rows never are. Default 7 days. */
  retentionMs?: number;
  /** Rows deleted per statement (small, so no statement holds many row locks). Default 500. */
  retentionBatchSize?: number;
  /** How often retention runs. Default 60 000. */
  retentionIntervalMs?: number;
}

export interface ResolvedOutboxRelayOptions {
  readonly enabled: boolean;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly publishTimeoutMs: number;
  readonly claimTtlMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly retentionMs: number;
  readonly retentionBatchSize: number;
  readonly retentionIntervalMs: number;
}
