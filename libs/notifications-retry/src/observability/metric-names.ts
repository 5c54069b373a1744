/** Metric names are a contract with dashboards and alert rules (observability/): never rename. */
export const RetryMetricName = {
  processed: 'notifications_retry_processed_total',
  sent: 'notifications_retry_sent_total',
  retried: 'notifications_retry_retried_total',
  terminalFailed: 'notifications_retry_terminal_failed_total',
  deferred: 'notifications_retry_deferred_total',
  itemErrors: 'notifications_retry_item_errors_total',
  leaseSkipped: 'notifications_retry_lease_skipped_total',
  failedBacklog: 'notifications_failed_backlog_gauge',
  channelDisabledRows: 'notifications_retry_channel_disabled_rows',
  circuitState: 'notifications_retry_circuit_state',
  lastCycleTimestamp: 'notifications_retry_last_cycle_timestamp_seconds',
  cycleDuration: 'notifications_retry_cycle_duration_ms',
  lag: 'notifications_retry_lag_ms',
  lateAnswers: 'notifications_retry_late_answers_total',
  databaseClientErrors: 'notifications_retry_database_client_errors_total',
} as const;
