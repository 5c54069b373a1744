// Public API of @pin/notifications-retry. Anything not exported here is internal.

export { NotificationsRetryModule } from './notifications-retry.module';
export type { NotificationsRetryExtensions } from './extensions/notifications-retry-extensions';
export type { NotificationsRetryExtensionProvider } from './extensions/extension-provider';
export type {
  CircuitBreakerOptions,
  NotificationsRetryModuleOptions,
  PreparedStatementsOption,
  ResolvedNotificationsRetryOptions,
} from './options/notifications-retry-options';
export { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from './options/resolved-options.token';

export { RetryCycleService, type RunCycleOptions } from './cycle/retry-cycle.service';
export type { LeaseAtStop, RetryWorkerStopReport } from './cycle/worker-stop-report';
export type { RetryWorkerHealth } from './health/retry-worker-health';
export { RetryWorkerHealthIndicator } from './health/retry-worker.health-indicator';
export { RetryWorkerHealthService } from './health/retry-worker-health.service';
export { RetryMetricName } from './observability/metric-names';
export type {
  CycleReport,
  CompletedCycleReport,
  SkippedCycleReport,
  CycleCounts,
  CycleSkipReason,
  CycleStopReason,
  ExcludedChannel,
  ChannelExclusionReason,
} from './vocabulary/cycle-report';

export {
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from './providers/provider-adapter';
export { NotificationProvider } from './providers/notification-provider.decorator';
export { DeliveryError } from './providers/errors/delivery.error';
export type { DeliveryErrorOptions } from './providers/errors/delivery-error-options';
export { RetriableDeliveryError } from './providers/errors/retriable-delivery.error';
export { NonRetriableDeliveryError } from './providers/errors/non-retriable-delivery.error';
export { ThrottledDeliveryError } from './providers/errors/throttled-delivery.error';
export { IN_APP_PROVIDER_KEY } from './providers/built-in/in-app.provider-adapter';

export { ChannelCatalog } from './channels/channel-catalog';
export type { ChannelConfig } from './channels/channel-config';
export { backoffDelayMs, BACKOFF_JITTER_RATIO, type RetryBackoff } from './channels/retry-backoff';

export { DistributedLock, type LockReleaseOptions } from './locking/distributed-lock';
export type { CompletedCycleRecord } from './locking/completed-cycle-record';
export type { Lease } from './vocabulary/lease';
export type { LeaseFence } from './vocabulary/lease-fence';
export { Clock, DatabaseClock, SystemClock } from './clock/clock';
export { RandomSource, MathRandomSource } from './clock/random-source';
export { ProviderCircuitBreakers } from './circuit/provider-circuit-breakers';
export type { CircuitState } from './circuit/circuit-state';
export { AlertSink } from './alerts/alert-sink';
export type { TerminalFailureAlert } from './alerts/terminal-failure-alert';

export {
  NOTIFICATION_DISPATCHED_TOPIC,
  NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
  type NotificationDispatchedEvent,
  type NotificationDispatchedHeaders,
} from './outbox/notification-dispatched-event';
export { NotificationStatus } from './vocabulary/notification-status';

export { NotificationsOutboxRelay } from './outbox/notifications-outbox.relay';
export type { OutboxRelayPass } from './outbox/outbox-relay-pass';
export { OutboxRetention } from './outbox/outbox-retention';
export { OutboxWakeUp } from './outbox/outbox-wake-up';
export { OutboxPublisher, type OutboxPublishContext } from './outbox/outbox-publisher';
export type { OutboxEvent } from './outbox/outbox-event';
export type { OutboxPublishOutcome, OutboxPublishStatus } from './outbox/outbox-publish-outcome';
export type {
  OutboxRelayOptions,
  ResolvedOutboxRelayOptions,
} from './options/outbox-relay-options';
export { OutboxMetricName } from './outbox/outbox-metric-names';
export { NatsJetStreamOutboxPublisher } from './outbox/nats/nats-jetstream-outbox-publisher';
export type { NatsJetStreamPublisherOptions } from './outbox/nats/nats-jetstream-publisher-options';
export { InvalidOutboxPublisherOptionsError } from './errors/invalid-outbox-publisher-options.error';
export { requiredDuplicateWindowMs } from './outbox/nats/jetstream-duplicate-window';

export { notificationsRetryEntities, notificationsRetryMigrations } from './persistence';
export {
  runMigrationsUnderLock,
  createMigratedDataSource,
  MIGRATIONS_ADVISORY_LOCK_KEY,
  MIGRATIONS_LOCK_TIMEOUT_MS,
  MIGRATION_STATEMENT_LOCK_TIMEOUT_MS,
  type MigrationRun,
  type MigrationRunSettings,
  type MigrationLogger,
} from './persistence/migrate-under-lock';
export { MigrationLockTimeoutError } from './errors/migration-lock-timeout.error';
export {
  NOTIFICATIONS_RETRY_DATA_SOURCE,
  InjectNotificationsRetryDataSource,
} from './persistence/notifications-retry-data-source';
export { NotificationEntity } from './persistence/notification.entity';
export { NotificationChannelEntity } from './persistence/notification-channel.entity';
export { NotificationOutboxEntity } from './persistence/notification-outbox.entity';
export { DistributedLockEntity } from './persistence/distributed-lock.entity';

export { NotificationsRetryError } from './errors/notifications-retry.error';
export { InvalidOperationInputError } from './errors/invalid-operation-input.error';
export { OperationRefusedError } from './errors/operation-refused.error';
export { InvalidModuleOptionsError } from './errors/invalid-module-options.error';
export { InvalidChannelConfigError } from './errors/invalid-channel-config.error';
export { InvalidChannelCatalogError } from './errors/invalid-channel-catalog.error';
export { DuplicateProviderKeyError } from './errors/duplicate-provider-key.error';
export { InvalidProviderAdapterError } from './errors/invalid-provider-adapter.error';
export { InsufficientPoolSizeError } from './errors/insufficient-pool-size.error';
export { ConnectionWaitTimeoutError } from './errors/connection-wait-timeout.error';
export { MissingProviderAdapterError } from './errors/missing-provider-adapter.error';
export { MissingLeaseFenceError } from './errors/missing-lease-fence.error';

export { WebhookProviderAdapter } from './providers/webhook/webhook-provider-adapter';
export type { WebhookProviderOptions } from './providers/webhook/webhook-provider-options';
export type { WebhookPayload } from './providers/webhook/webhook-payload';
export { parseRetryAfterMs } from './providers/webhook/parse-retry-after';

// Operator tools (runbooks: docs/runbooks/).
export {
  TerminalFailures,
  DEFAULT_TERMINAL_LIST_LIMIT,
  MAX_TERMINAL_LIST_LIMIT,
  type TerminalFailureRow,
  type TerminalFailureStat,
} from './operations/terminal-failures';
export {
  TerminalRedrive,
  REDRIVE_BATCH_SIZE,
  type RedriveRequest,
  type RedriveResult,
  type RedrivePreviewGroup,
} from './operations/terminal-redrive';
export type { TerminalFailureFilter, RedriveFilter } from './operations/terminal-failure-filter';
export {
  ChannelPauses,
  type ChannelPause,
  type ChannelPauseChange,
  type ListedChannelPause,
} from './operations/channel-pauses';
export {
  LeaseRelease,
  type LeaseReleaseRequest,
  type LeaseReleaseResult,
  type LeaseView,
} from './operations/lease-release';
export {
  OperationsStatus,
  type OperationsStatusReport,
  type ChannelRowCounts,
  type StatusExcludedChannel,
} from './operations/operations-status';
export {
  NotificationBrowser,
  NOTIFICATION_LIST_STATES,
  DEFAULT_NOTIFICATION_LIST_LIMIT,
  MAX_NOTIFICATION_LIST_LIMIT,
  type NotificationListQuery,
  type NotificationListState,
  type NotificationPage,
  type NotificationSummary,
  type NotificationStateCounts,
  type NotificationDetail,
} from './operations/notification-browser';
export {
  NotificationDiscard,
  DISCARD_STATES,
  DISCARD_ERROR_CODE,
  DISCARD_ERROR_MESSAGE,
  DISCARD_BATCH_SIZE,
  MAX_DISCARD_IDS,
  type DiscardFilter,
} from './operations/notification-discard';
export {
  OutboxOperations,
  OUTBOX_LIST_STATES,
  DEFAULT_OUTBOX_LIST_LIMIT,
  MAX_OUTBOX_LIST_LIMIT,
  type OutboxListState,
  type OutboxListQuery,
  type OutboxEventSummary,
  type OutboxPage,
  type OutboxStateCounts,
} from './operations/outbox-operations';
export {
  OperatorAuditLog,
  DEFAULT_AUDIT_LIST_LIMIT,
  MAX_AUDIT_LIST_LIMIT,
  type OperatorAuditQuery,
  type OperatorAuditEntry,
  type OperatorAuditPage,
} from './operations/operator-audit-log';
export {
  RecentCycles,
  DEFAULT_RECENT_CYCLE_HOURS,
  MAX_RECENT_CYCLE_HOURS,
  DEFAULT_RECENT_CYCLE_LIMIT,
  MAX_RECENT_CYCLE_LIMIT,
  type RecentCyclesQuery,
  type RecentCycle,
} from './operations/recent-cycles';
export {
  ATTEMPT_HISTORY_LIMIT,
  type AttemptHistoryEntry,
} from './vocabulary/attempt-history-entry';
export type { OperatorContext } from './operations/operator-context';
export { maskAddress } from './operations/mask-address';
export { NotificationChannelPauseEntity } from './persistence/notification-channel-pause.entity';
export { NotificationOperatorActionEntity } from './persistence/notification-operator-action.entity';
export { NotificationRedrivenRowEntity } from './persistence/notification-redriven-row.entity';
export { NotificationOperatorActionRowEntity } from './persistence/notification-operator-action-row.entity';
