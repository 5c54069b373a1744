import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { AlertSink, LoggingAlertSink } from './alerts/alert-sink';
import { ChannelCatalog } from './channels/channel-catalog';
import { PausedChannels } from './channels/paused-channels';
import { TypeOrmChannelCatalog } from './channels/typeorm-channel-catalog';
import { ProviderCircuitBreakers } from './circuit/provider-circuit-breakers';
import { Clock, DatabaseClock } from './clock/clock';
import { MathRandomSource, RandomSource } from './clock/random-source';
import { RetryCycleScheduler } from './cycle/retry-cycle.scheduler';
import { ChannelPacer } from './cycle/channel-pacer';
import { CatalogStartCheck } from './cycle/catalog-start-check';
import { ClaimPlanner } from './cycle/claim-planner';
import { CycleLease } from './cycle/cycle-lease';
import { CycleReports } from './cycle/cycle-reports';
import { CycleStarter } from './cycle/cycle-starter';
import { RetryCycleService } from './cycle/retry-cycle.service';
import { RetryWorkerState } from './cycle/retry-worker-state';
import { RowCensus } from './cycle/row-census';
import { RowRunner } from './cycle/row-runner';
import { LateSuccessRecorder } from './cycle/late-success-recorder';
import { ProviderCallsInFlight } from './cycle/provider-calls-in-flight';
import { ChannelResolver } from './cycle/channel-resolver';
import { ClaimRelease } from './cycle/claim-release';
import { CycleReporter } from './cycle/cycle-reporter';
import { DueRowClaimer } from './cycle/due-row-claimer';
import { OutcomeWriterFactory } from './cycle/outcome-writer';
import { ProviderCaller } from './cycle/provider-caller';
import { RowCounts } from './cycle/row-counts';
import { DistributedLock } from './locking/distributed-lock';
import { LastCompletedCycleRead } from './locking/last-completed-cycle-read';
import { PostgresDistributedLock } from './locking/postgres-distributed-lock';
import {
  ConfigurableNotificationsRetryModule,
  NOTIFICATIONS_RETRY_MODULE_OPTIONS,
} from './notifications-retry.module-definition';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from './options/resolved-options.token';
import type {
  NotificationsRetryModuleOptions,
  ResolvedNotificationsRetryOptions,
} from './options/notifications-retry-options';
import { resolveOptions } from './options/resolve-options';
import { RetryMetrics } from './observability/retry-metrics';
import { CircuitStateMetrics } from './observability/circuit-state-metrics';
import { RetryWorkerHealthService } from './health/retry-worker-health.service';
import { RetryWorkerHealthIndicator } from './health/retry-worker.health-indicator';
import { NotificationsOutboxRelay } from './outbox/notifications-outbox.relay';
import { OutboxRelayMetrics } from './outbox/outbox-relay-metrics';
import { OutboxRelayRepository } from './outbox/outbox-relay.repository';
import { OutboxRetention } from './outbox/outbox-retention';
import { OutboxWakeUp } from './outbox/outbox-wake-up';
import { OutboxWriter } from './outbox/outbox.writer';
import { SqlRunner } from './persistence/sql-runner';
import { ConnectionPoolBudget } from './persistence/connection-pool-budget';
import { PgClientErrorGuard } from './persistence/pg-client-error-guard';
import { PreparedStatementMode } from './persistence/prepared-statement-mode';
import { InAppProviderAdapter } from './providers/built-in/in-app.provider-adapter';
import {
  EmailStubProviderAdapter,
  PushStubProviderAdapter,
  SmsStubProviderAdapter,
} from './providers/built-in/stub-provider-adapters';
import { ProviderAdapterRegistry } from './providers/provider-adapter.registry';
import { ChannelPauses } from './operations/channel-pauses';
import { LeaseRelease } from './operations/lease-release';
import { OperationsStatus } from './operations/operations-status';
import { TerminalFailures } from './operations/terminal-failures';
import { TerminalRedrive } from './operations/terminal-redrive';
import { NotificationBrowser } from './operations/notification-browser';
import { NotificationDiscard } from './operations/notification-discard';
import { OperatorAuditLog } from './operations/operator-audit-log';
import { OutboxOperations } from './operations/outbox-operations';
import { RecentCycles } from './operations/recent-cycles';

/** The operator tools (issue 13): exported for a host's CLI or admin page. */
const OPERATIONS = [
  ChannelPauses,
  LeaseRelease,
  NotificationBrowser,
  NotificationDiscard,
  OperationsStatus,
  OperatorAuditLog,
  OutboxOperations,
  RecentCycles,
  TerminalFailures,
  TerminalRedrive,
];

/**
 * Retries Failed and sends deferred Pending notifications from PostgreSQL.
 * Uses the host's TypeORM DataSource: register `notificationsRetryEntities` and
 * `notificationsRetryMigrations` there.
 */
@Module({
  // ScheduleModule.forRoot() is the host's to import: a second root here would run the host's own
  // @Cron jobs twice whenever its options differ from ours.
  // TerminusModule: HealthIndicatorService for the exported health indicator.
  imports: [DiscoveryModule, TerminusModule],
  providers: [
    {
      provide: RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
      useFactory: (options: NotificationsRetryModuleOptions) => resolveOptions(options),
      inject: [NOTIFICATIONS_RETRY_MODULE_OPTIONS],
    },
    { provide: Clock, useClass: DatabaseClock },
    { provide: RandomSource, useClass: MathRandomSource },
    { provide: ChannelCatalog, useClass: TypeOrmChannelCatalog },
    { provide: DistributedLock, useClass: PostgresDistributedLock },
    LastCompletedCycleRead,
    { provide: AlertSink, useClass: LoggingAlertSink },
    ProviderAdapterRegistry,
    ProviderCircuitBreakers,
    RetryMetrics,
    CircuitStateMetrics,
    PgClientErrorGuard,
    SqlRunner,
    PreparedStatementMode,
    OutboxWriter,
    OutboxWakeUp,
    OutboxRelayRepository,
    {
      // Declared only where a relay runs: elsewhere its gauges would report a backlog nobody looked at.
      provide: OutboxRelayMetrics,
      useFactory: (options: ResolvedNotificationsRetryOptions) =>
        options.outboxRelay.enabled ? new OutboxRelayMetrics(options.metrics.registry) : null,
      inject: [RESOLVED_NOTIFICATIONS_RETRY_OPTIONS],
    },
    NotificationsOutboxRelay,
    OutboxRetention,
    ChannelPacer,
    ProviderCallsInFlight,
    LateSuccessRecorder,
    PausedChannels,
    ChannelResolver,
    DueRowClaimer,
    ProviderCaller,
    OutcomeWriterFactory,
    ClaimRelease,
    RowCounts,
    CycleReporter,
    ConnectionPoolBudget,
    RetryWorkerState,
    CycleLease,
    CycleStarter,
    CycleReports,
    ClaimPlanner,
    RowRunner,
    RowCensus,
    CatalogStartCheck,
    RetryCycleService,
    RetryCycleScheduler,
    RetryWorkerHealthService,
    RetryWorkerHealthIndicator,
    InAppProviderAdapter,
    EmailStubProviderAdapter,
    SmsStubProviderAdapter,
    PushStubProviderAdapter,
    ...OPERATIONS,
  ],
  exports: [
    ...OPERATIONS,
    RetryCycleService,
    RetryWorkerHealthService,
    RetryWorkerHealthIndicator,
    ProviderCircuitBreakers,
    NotificationsOutboxRelay,
    OutboxRetention,
    OutboxWakeUp,
    RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
  ],
})
export class NotificationsRetryModule extends ConfigurableNotificationsRetryModule {}
