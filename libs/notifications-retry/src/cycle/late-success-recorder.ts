import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { NotificationStatus } from '../vocabulary/notification-status';
import { RetryMetrics } from '../observability/retry-metrics';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import type { NotificationDispatchedHeaders } from '../outbox/notification-dispatched-event';
import { OutboxWakeUp } from '../outbox/outbox-wake-up';
import { OutboxWriter } from '../outbox/outbox.writer';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import {
  compileRecordLateSuccess,
  type RecordedLateSuccess,
  type RecordLateSuccessValue,
} from '../persistence/sql/record-late-success.sql';
import type { BoundStatement } from '../persistence/sql/sql-statement';
import { SqlRunner } from '../persistence/sql-runner';
import { retryPassingErrors } from '../persistence/retry-passing-errors';
import type { LateSuccess } from './attempt-delivery';
import { attemptHistoryFields } from './attempt-record';
import type { ClaimedRow } from './claimed-row';
import type { EligibleChannel } from './cycle-state';
import { errorText } from '../vocabulary/error-text';
import { ProviderCallsInFlight } from './provider-calls-in-flight';

/** One late success to record: the call's row as claimed, and the cycle that made the call. */
export interface LateSuccessInput {
  readonly row: ClaimedRow;
  readonly channel: EligibleChannel;
  readonly success: LateSuccess;
  readonly runId: string;
  readonly correlationId: string;
  /** The provider call span's, for the event's headers. */
  readonly traceparent: string | undefined;
  /** From the adapter's call to its late answer, for the attempt history. */
  readonly latencyMs: number | null;
}

/**
 * How long a late success's write is tried again after passing failures (a
 * killed backend, a lock behind a DBA's timeout): no claim bounds it, and a
 * delivered notification is worth more than a prompt give-up.
 */
const LATE_SUCCESS_RETRY_MS = 30_000;

/** What the row was when the late success reached it, for the log line. */
type FoundAs = 'retrying' | 'terminal' | 'pending' | 'claimed';

/**
 * Records a success the provider answered after its attempt was written off
 * (DESIGN §3.4, §7: a delivered notification never ends terminal Failed
 * because its answer came late): the row becomes Sent with its Sent event,
 * one autocommit statement (record-late-success.sql.ts).
 *
 * Lives beside the cycle, not in it: the answer may come after the cycle that
 * made the call has ended and released its lease. Each write takes a pooled
 * connection of its own, with no deadline but the pool's: no lease bounds it.
 *
 * Shutdown: a call written off is still tracked in ProviderCallsInFlight
 * until it settles, and so is the write of its late success (the caller
 * chains the write to the call). `beforeApplicationShutdown` waits for them
 * for up to `shutdownGraceMs` (at the same time as the cycle's own wait, Nest
 * runs the module's hooks together), then for every write already started:
 * all of that happens before the host's DataSource closes (TypeORM closes it
 * in onApplicationShutdown). A success answered after that is not recorded
 * (`late-success-not-recorded`): the row stays as it was, a retrying row is
 * sent again by another instance (the provider deduplicates on the id) and
 * recorded Sent then; only a row already terminal keeps its Failed.
 */
@Injectable()
export class LateSuccessRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger('NotificationsRetryCycle');
  private readonly statement: BoundStatement<RecordLateSuccessValue>;
  private readonly writes = new Set<Promise<void>>();
  /** Ends the retries of writes still failing once the shutdown grace is over. */
  private readonly stopping = new AbortController();

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
    private readonly clock: Clock,
    private readonly outbox: OutboxWriter,
    private readonly outboxWakeUp: OutboxWakeUp,
    private readonly metrics: RetryMetrics,
    private readonly callsInFlight: ProviderCallsInFlight,
  ) {
    this.statement = compileRecordLateSuccess(dataSource);
  }

  /** Writes the late success; never rejects (a failure is logged and counted). */
  record(input: LateSuccessInput): Promise<void> {
    const write = this.write(input).finally(() => this.writes.delete(write));
    this.writes.add(write);
    return write;
  }

  async beforeApplicationShutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.shutdownGraceMs);
    });
    try {
      await Promise.race([this.callsInFlight.settled(), grace]);
    } finally {
      clearTimeout(timer);
    }
    const cut = setTimeout(() => this.stopping.abort(), this.options.shutdownGraceMs);
    try {
      await Promise.allSettled([...this.writes]);
    } finally {
      clearTimeout(cut);
    }
  }

  private async write(input: LateSuccessInput): Promise<void> {
    const { row, channel, success } = input;
    const providerKey = channel.config.providerKey;
    const sentAt = this.clock.now();
    // Counted once: the statement keeps a higher count (the write-off counted it, or later
    // attempts followed) and raises a lower one to this.
    const callAttempt = row.attempts + 1;
    const event = this.outbox.dispatchedRow(
      {
        notificationId: row.id,
        tenantId: row.tenantId,
        channel: row.channel,
        status: NotificationStatus.Sent,
        // Replaced by the row's attempts as written: only the statement knows them.
        attempts: callAttempt,
        providerKey,
        providerMessageId: success.providerMessageId,
        errorCode: null,
        occurredAt: sentAt.toISOString(),
      },
      {
        correlationId: input.correlationId,
        jobRunId: input.runId,
        ...(input.traceparent ? { traceparent: input.traceparent } : {}),
      } satisfies NotificationDispatchedHeaders,
    );
    const ids = {
      runId: input.runId,
      correlationId: input.correlationId,
      notificationId: row.id,
      channel: row.channel,
      providerKey,
      writtenOffAs: success.writtenOffAs,
    };
    let recorded: RecordedLateSuccess | undefined;
    try {
      const values = this.statement.values({
        id: row.id,
        callAttempt,
        providerMessageId: success.providerMessageId,
        sentAt,
        eventId: event.id,
        eventTopic: event.topic,
        eventMessageKey: event.messageKey,
        eventContractVersion: event.contractVersion,
        eventPayload: event.payload,
        eventHeaders: event.headers,
        historyEntry: JSON.stringify(
          attemptHistoryFields(
            {
              outcome: 'late-success',
              httpStatus: null,
              latencyMs: input.latencyMs === null ? null : Math.round(input.latencyMs),
            },
            { lastErrorCode: null, lastErrorMessage: null },
          ),
        ),
      });
      // Safe to repeat: a write that committed before its reply was lost finds the row Sent.
      [recorded] = await retryPassingErrors(
        () => this.sql.run<RecordedLateSuccess>(this.statement, values),
        {
          giveUpAt: performance.now() + LATE_SUCCESS_RETRY_MS,
          signal: this.stopping.signal,
          onRetry: () => this.metrics.statementRetried('late-success'),
        },
      );
    } catch (error) {
      this.metrics.lateSuccess(row.channel, providerKey, false);
      this.logger.error({
        ...ids,
        msg: 'late-success-not-recorded',
        event: 'late-success-not-recorded',
        note: 'the provider delivered it but the Sent could not be written; the row stays as it was',
        error: errorText(error),
      });
      return;
    }
    this.metrics.lateSuccess(row.channel, providerKey, recorded !== undefined);
    if (!recorded) {
      // Another call's success was recorded first, with its own event: nothing is left to say.
      this.logger.log({
        ...ids,
        msg: 'late-success-already-sent',
        event: 'late-success-already-sent',
      });
      return;
    }
    this.outboxWakeUp.eventsWritten();
    const foundAs = foundAsOf(recorded);
    this.logger.warn({
      ...ids,
      msg: 'late-success-recorded',
      event: 'late-success-recorded',
      foundAs,
      attempts: recorded.attempts,
      sequence: recorded.sequence,
      ...(foundAs === 'terminal'
        ? {
            note: 'the notification had ended terminal Failed (its Failed event and terminal alert went out): its Sent event, with a higher sequence, supersedes them',
          }
        : {}),
    });
  }
}

function foundAsOf(recorded: RecordedLateSuccess): FoundAs {
  if (recorded.previousClaimLive) return 'claimed';
  if (recorded.previousStatus === NotificationStatus.Pending) return 'pending';
  return recorded.previousNextAttemptAt === null ? 'terminal' : 'retrying';
}
