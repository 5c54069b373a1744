/** The outbox relay's metrics: a contract with dashboards and alert rules (observability/), never rename. */
export const OutboxMetricName = {
  unpublishedRows: 'notifications_outbox_unpublished_rows',
  oldestUnpublishedAge: 'notifications_outbox_oldest_unpublished_age_seconds',
  parkedRows: 'notifications_outbox_parked_rows',
  published: 'notifications_outbox_published_total',
  parked: 'notifications_outbox_parked_total',
  publishFailures: 'notifications_outbox_publish_failures_total',
  publishDuration: 'notifications_outbox_publish_duration_ms',
  retentionDeleted: 'notifications_outbox_retention_deleted_total',
  lastRelayPass: 'notifications_outbox_relay_last_pass_timestamp_seconds',
} as const;
