import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { context as otelContext, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { DataSource, type EntityManager } from 'typeorm';
import { AlertSink } from '../alerts/alert-sink';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { Clock } from '../clock/clock';
import { RandomSource } from '../clock/random-source';
import { LeaseLostError } from '../errors/lease-lost.error';
import { DistributedLock } from '../locking/distributed-lock';
import type { Lease } from '../locking/lease';
import type { SqlFence } from '../locking/sql-fence';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../notifications-retry.module-definition';
import { RetryMetrics } from '../observability/retry-metrics';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import type { NotificationDispatchedHeaders } from '../outbox/notification-dispatched-event';
import type { OutboxRow } from '../outbox/outbox-row';
import { OutboxWriter } from '../outbox/outbox.writer';
import { OutboxWakeUp } from '../outbox/outbox-wake-up';
import type { ClaimedNotification } from '../persistence/claimed-notification';
import { NotificationRepository, type DueCandidate } from '../persistence/notification.repository';
import { setIdleInTransactionTimeoutSql } from '../persistence/idle-in-transaction-timeout';
import { runInPooledPgTransaction } from '../persistence/pooled-pg-transaction';
import { PreparedStatementMode } from '../persistence/prepared-statement-mode';
import type { SqlExecutor } from '../persistence/sql-executor';
import { attemptDelivery, type LateAnswer } from './attempt-delivery';
import type { AttemptOutcome } from './attempt-outcome';
import { ChannelPacer } from './channel-pacer';
import type { CycleContext, EligibleChannel, ItemOutcome } from './cycle-context';
import { ProviderCallsInFlight } from './provider-calls-in-flight';
import { errorText } from './error-text';
import {
  decideTransition,
  isAllowedTransition,
  unrecordedOutcomeTransition,
  type RowTransition,
} from './row-transition';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';

/** A row's committed change, reported after COMMIT. */
interface CommittedItem {
  readonly row: ClaimedNotification;
  readonly transition: RowTransition;
  readonly processedAt: Date;
}

const tracer = trace.getTracer('@pin/notifications-retry');
/** Beyond the lease TTL, before the server ends a row transaction left idle (see idleInTransactionTimeoutMs). */
export const IDLE_IN_TRANSACTION_GRACE_MS = 5_000;

/**
 * The unit of work for one due row, in its own transaction: lock it (skipping
 * it if anyone else holds it or it is no longer due), call its provider, check
 * the lease is still ours, write the outcome and its outbox event, commit; then
 * log, count and alert. Never throws: every ending is an `ItemOutcome`.
 */
@Injectable()
export class RowProcessor {
  private readonly logger = new Logger('NotificationsRetryCycle');

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    private readonly lock: DistributedLock,
    private readonly notifications: NotificationRepository,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly alerts: AlertSink,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly pacer: ChannelPacer,
    private readonly metrics: RetryMetrics,
    private readonly callsInFlight: ProviderCallsInFlight,
    private readonly preparedStatements: PreparedStatementMode,
    private readonly outboxWakeUp: OutboxWakeUp,
  ) {}

  /** One row, one transaction: lock → provider call → fence → status + outbox → commit. */
  async process(
    context: CycleContext,
    candidate: DueCandidate,
    channel: EligibleChannel,
  ): Promise<ItemOutcome> {
    const { runId, correlationId } = context;
    // An earlier call for it is still running (written off at its timeout and settle margin): a
    // second one now would be two deliveries in flight for one notification.
    if (this.callsInFlight.has(candidate.id)) return 'skipped';
    // With an SQL fence the fence, the row and its event are one statement; otherwise confirm() first.
    const fence = this.lock.sqlFence(context.lease);
    // Set once the provider has been called: if the write then fails, the row must not stay due.
    let called: CommittedItem | null = null;
    let committed: CommittedItem | null;
    // From the provider's answer (or the decision not to call) to the commit: the settle time.
    let decidedAt = 0;
    try {
      committed = await this.rowTransaction(fence, async (executor) => {
        const row = await this.notifications.lockIfDue(executor, candidate, context.now);
        if (!row) return null;
        const { outcome, traceparent } =
          row.attempts >= channel.config.maxAttempts
            ? { outcome: { kind: 'exhausted' } as const, traceparent: undefined }
            : await this.send(context, row, channel);
        decidedAt = performance.now();
        const processedAt = this.clock.now();
        const transition = decideTransition(
          row,
          channel.config,
          outcome,
          processedAt,
          this.random.next(),
        );
        if (!isAllowedTransition(row.status, transition.status)) {
          throw new Error(`transition ${row.status} → ${transition.status} violates INV-NTF-5`);
        }
        if (outcome.kind !== 'exhausted') called = { row, transition, processedAt };
        const event = transition.event
          ? this.outbox.dispatchedRow(
              {
                notificationId: row.id,
                tenantId: row.tenantId,
                channel: row.channel,
                status: transition.event,
                attempts: transition.attempts,
                providerKey: channel.config.providerKey,
                providerMessageId: transition.providerMessageId,
                errorCode: transition.lastErrorCode,
                occurredAt: processedAt.toISOString(),
              },
              {
                correlationId,
                jobRunId: runId,
                ...(traceparent ? { traceparent } : {}),
              } satisfies NotificationDispatchedHeaders,
            )
          : null;
        const written = fence
          ? await this.notifications.applyTransitionFenced(
              executor,
              fence,
              row.id,
              transition,
              event,
            )
          : await this.writeAfterConfirm(executor, context.lease, row.id, transition, event);
        if (!written) throw new LeaseLostError(context.lease.key, context.lease.fencingToken);
        return { row, transition, processedAt };
      });
    } catch (error) {
      // Rolled back: the row is due again for the next cycle.
      if (error instanceof LeaseLostError) {
        this.logger.warn({
          msg: 'lease-lost',
          event: 'lease-lost',
          runId,
          correlationId,
          notificationId: candidate.id,
          fencingToken: context.lease.fencingToken,
        });
        return 'lease-lost';
      }
      this.metrics.itemFailed(candidate.channel);
      this.logger.error({
        msg: 'item-error',
        event: 'item-error',
        runId,
        correlationId,
        notificationId: candidate.id,
        channel: candidate.channel,
        error: errorText(error),
      });
      if (called) await this.holdUnrecordedOutcome(context, candidate, channel, called);
      return 'error';
    }
    if (!committed) return 'skipped';
    // OUTBOX RELAY HOOK (issue 14): the row's outbox event is committed; publish it now, not at the next poll.
    if (committed.transition.event) this.outboxWakeUp.eventsWritten();
    const settleMs = performance.now() - decidedAt;
    context.timings.settle.add(settleMs);
    this.metrics.settled(settleMs);
    this.metrics.itemProcessed(
      committed.transition.result,
      committed.row.channel,
      channel.config.providerKey,
      committed.processedAt.getTime() - candidate.dueAt.getTime(),
    );
    await this.reportItem(context, candidate, channel, committed);
    return committed.transition.result;
  }

  /**
   * The provider was called but the outcome's transaction failed: record the
   * attempt and push the row back by its backoff, in a transaction of its own
   * (lock, fence, write; no event), so a write that keeps failing does not make
   * every cycle send the row again. If this fails too (the database is gone),
   * the row stays due, as after a crash.
   */
  private async holdUnrecordedOutcome(
    context: CycleContext,
    candidate: DueCandidate,
    channel: EligibleChannel,
    attempted: CommittedItem,
  ): Promise<void> {
    const fields = {
      runId: context.runId,
      correlationId: context.correlationId,
      notificationId: candidate.id,
      channel: candidate.channel,
      providerKey: channel.config.providerKey,
    };
    try {
      const held = await this.typeOrmTransaction(async (manager) => {
        const row = await this.notifications.lockIfDue(manager, candidate, context.now);
        if (!row) return null;
        const transition = unrecordedOutcomeTransition(
          row,
          channel.config,
          attempted.transition,
          this.clock.now(),
          this.random.next(),
        );
        const written = await this.writeAfterConfirm(
          manager,
          context.lease,
          row.id,
          transition,
          null,
        );
        return written ? transition : null;
      });
      if (!held) {
        // Taken or finished by someone else meanwhile, or the lease is gone: theirs to record.
        this.logger.warn({
          msg: 'item-outcome-unrecorded',
          event: 'item-outcome-unrecorded',
          ...fields,
          held: false,
        });
        return;
      }
      this.logger.warn({
        msg: 'item-outcome-unrecorded',
        event: 'item-outcome-unrecorded',
        ...fields,
        held: true,
        attempts: held.attempts,
        errorCode: held.lastErrorCode,
        nextAttemptAt: (held.nextAttemptAt ?? held.scheduledAt)?.toISOString(),
      });
    } catch (error) {
      this.logger.error({
        msg: 'item-outcome-unrecorded-hold-failed',
        event: 'item-outcome-unrecorded-hold-failed',
        ...fields,
        error: errorText(error),
      });
    }
  }

  /**
   * One row's transaction. With an SQL fence every statement of the unit of
   * work is plain SQL, so it runs on a bare pooled `pg` client (no QueryRunner,
   * no broadcaster; named statements as PreparedStatementMode decides). A lock
   * without one gets a TypeORM transaction, whose EntityManager its
   * `confirm()` expects.
   */
  private async rowTransaction<T>(
    fence: SqlFence | null,
    work: (executor: SqlExecutor) => Promise<T>,
  ): Promise<T> {
    if (!fence) return this.typeOrmTransaction(work);
    return runInPooledPgTransaction(
      this.dataSource,
      {
        preparedStatements: await this.preparedStatements.named(),
        idleInTransactionTimeoutMs: this.idleInTransactionTimeoutMs(),
        onNamedStatementError: (error) => this.preparedStatements.namedStatementFailed(error),
      },
      work,
    );
  }

  /**
   * A TypeORM transaction under the same idle bound as a pooled one: one
   * statement more (TypeORM sends its own START TRANSACTION), on paths off the
   * hot one (a lock without an SQL fence; the write of an unrecorded outcome).
   */
  private typeOrmTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(setIdleInTransactionTimeoutSql(this.idleInTransactionTimeoutMs()));
      return work(manager);
    });
  }

  /**
   * A row's transaction is idle only while its provider call runs, and the
   * channel timeout keeps that inside the lease, taken before the transaction
   * began: idle for longer than the lease TTL, it can never commit under the
   * fence. The server then ends it, which frees the row of a worker that is
   * stuck for good. The grace lets a worker that resumes just after its lease
   * ran out meet the fence (lease-lost: the cycle stops) rather than a closed
   * connection.
   */
  private idleInTransactionTimeoutMs(): number {
    return this.options.lockTtlMs + IDLE_IN_TRANSACTION_GRACE_MS;
  }

  /**
   * Confirm, then write, one statement each: the outcome write for a
   * DistributedLock without an SQL fence, and the separate write of an
   * unrecorded outcome for any lock. Only ever called inside
   * `dataSource.transaction()`, so the executor is that transaction's
   * EntityManager.
   */
  private async writeAfterConfirm(
    executor: SqlExecutor,
    lease: Lease,
    id: string,
    transition: RowTransition,
    event: OutboxRow | null,
  ): Promise<boolean> {
    if (!(await this.lock.confirm(lease, executor as EntityManager))) return false;
    await this.notifications.applyTransition(executor, id, transition);
    if (event) await this.outbox.append(executor, event);
    return true;
  }

  /**
   * The provider call, in its own span under the cycle's: paced to the
   * channel's rate, through the provider's circuit breaker, cut at the channel
   * timeout or when the worker must stop. Returns the span's W3C traceparent
   * for the outbox headers (none without an OpenTelemetry SDK).
   */
  private async send(
    context: CycleContext,
    row: ClaimedNotification,
    channel: EligibleChannel,
  ): Promise<{ outcome: AttemptOutcome; traceparent: string | undefined }> {
    const span = tracer.startSpan(
      'notifications.retry.provider.send',
      {
        attributes: {
          'notifications.notification_id': row.id,
          'notifications.run_id': context.runId,
          'notifications.correlation_id': context.correlationId,
          'notifications.channel': row.channel,
          'notifications.provider': channel.config.providerKey,
        },
      },
      trace.setSpan(otelContext.active(), context.span),
    );
    try {
      const outcome = await this.circuits.call(
        channel.config.providerKey,
        async () => {
          await this.pacer.awaitCallSlot(row.channel, channel.config.rateLimitPerSec);
          return attemptDelivery(
            channel.adapter,
            {
              id: row.id,
              tenantId: row.tenantId,
              channel: row.channel,
              recipientAddress: row.recipientAddress,
              subject: row.subject,
              body: row.body,
              attempts: row.attempts,
            },
            channel.config.timeoutMs,
            context.interrupt.signal,
            {
              settleMarginMs: this.options.settleMarginMs,
              onCallStarted: (settled) => this.callsInFlight.track(row.id, settled),
              onLateAnswer: (late) => this.reportLateAnswer(context, row, channel, late),
            },
          );
        },
        { runId: context.runId, correlationId: context.correlationId },
      );
      span.setAttribute('notifications.outcome', outcome.kind);
      if (outcome.kind !== 'sent') {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: 'errorCode' in outcome ? outcome.errorCode : outcome.kind,
        });
      }
      const carrier: Record<string, string> = {};
      propagation.inject(trace.setSpan(otelContext.active(), span), carrier);
      return { outcome, traceparent: carrier.traceparent };
    } finally {
      span.end();
    }
  }

  /**
   * An answer after the channel timeout. Inside the settle margin it is the
   * outcome and only counted; after it the attempt was already written off as
   * a timeout, so what the provider said is lost to the row: logged, because a
   * late success means the notification was delivered although the row says not.
   */
  private reportLateAnswer(
    context: CycleContext,
    row: ClaimedNotification,
    channel: EligibleChannel,
    late: LateAnswer,
  ): void {
    this.metrics.lateAnswer(row.channel, channel.config.providerKey, late.recorded);
    if (late.recorded) return;
    this.logger.warn({
      msg: 'late-answer-unrecorded',
      event: 'late-answer-unrecorded',
      runId: context.runId,
      correlationId: context.correlationId,
      notificationId: row.id,
      channel: row.channel,
      providerKey: channel.config.providerKey,
      answer: late.answer,
    });
  }

  private async reportItem(
    context: CycleContext,
    candidate: DueCandidate,
    channel: EligibleChannel,
    { row, transition, processedAt }: CommittedItem,
  ): Promise<void> {
    const fields = {
      runId: context.runId,
      correlationId: context.correlationId,
      notificationId: row.id,
      channel: row.channel,
      providerKey: channel.config.providerKey,
      attempts: transition.attempts,
      errorCode: transition.lastErrorCode,
      lagMs: processedAt.getTime() - candidate.dueAt.getTime(),
    };
    switch (transition.result) {
      case 'sent':
        this.logger.log({ msg: 'item-sent', event: 'item-sent', ...fields });
        return;
      case 'retried':
        this.logger.warn({
          msg: 'item-retried',
          event: 'item-retried',
          ...fields,
          nextAttemptAt: transition.nextAttemptAt?.toISOString(),
        });
        return;
      case 'deferred':
        this.logger.warn({
          msg: 'item-deferred',
          event: 'item-deferred',
          ...fields,
          nextAttemptAt: (transition.nextAttemptAt ?? transition.scheduledAt)?.toISOString(),
        });
        return;
      case 'terminal':
        this.logger.error({
          msg: 'item-failed-terminal',
          event: 'item-failed-terminal',
          ...fields,
        });
        try {
          await this.alerts.terminalFailure({
            notificationId: row.id,
            channel: row.channel,
            providerKey: channel.config.providerKey,
            attempts: transition.attempts,
            errorCode: transition.lastErrorCode ?? 'unknown',
            runId: context.runId,
            correlationId: context.correlationId,
          });
        } catch (error) {
          this.logger.error({
            msg: 'alert-sink-failed',
            event: 'alert-sink-failed',
            ...fields,
            error: errorText(error),
          });
        }
        return;
    }
  }
}
