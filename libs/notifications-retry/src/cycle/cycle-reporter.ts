import { Injectable, Logger } from '@nestjs/common';
import { AlertSink } from '../alerts/alert-sink';
import { RetryMetrics } from '../observability/retry-metrics';
import type { LateAnswer } from './attempt-delivery';
import type { ChannelExclusions } from './channel-exclusions';
import type { ClaimedRow } from './claimed-row';
import type { CompletedCycleReport } from '../vocabulary/cycle-report';
import type { CycleState, EligibleChannel } from './cycle-state';
import { errorText } from '../vocabulary/error-text';
import { sqlState } from '../persistence/database-error-kind';
import type { LeaseLossCause } from './lease-loss';
import type { OutcomeWriteResult } from './outcome-write-result';
import type { RowOutcome } from './row-settlement';

/**
 * What the cycle tells operators — log lines, metrics, alerts — kept apart
 * from the unit of work: nothing here decides or writes anything about a row.
 * Log lines carry ids, channels, codes and counts, never a row's address,
 * subject or body.
 */
@Injectable()
export class CycleReporter {
  private readonly logger = new Logger('NotificationsRetryCycle');

  constructor(
    private readonly metrics: RetryMetrics,
    private readonly alerts: AlertSink,
  ) {}

  cycleStarted(cycle: CycleState): void {
    this.logger.log({
      ...this.ids(cycle),
      msg: 'retry-cycle-started',
      event: 'retry-cycle-started',
      fencingToken: cycle.lease.fencingToken,
      now: cycle.now.toISOString(),
    });
  }

  skipped(runId: string, correlationId: string, reason: string, lockKey: string): void {
    if (reason === 'lease-held') {
      this.logger.log({
        msg: 'lease-not-acquired',
        event: 'lease-not-acquired',
        lockKey,
        runId,
        correlationId,
      });
      return;
    }
    this.logger.log({
      msg: 'retry-cycle-skipped',
      event: 'retry-cycle-skipped',
      reason,
      runId,
      correlationId,
    });
  }

  claimed(cycle: CycleState, durationMs: number, rows: readonly ClaimedRow[]): void {
    cycle.timings.claim.add(durationMs);
    this.metrics.claimed(durationMs);
    for (const row of rows) if (row.lapsed) this.metrics.claimLapsed(row.channel);
  }

  /**
   * The channels left out, however many there are: one `channel-disabled`
   * line for the disabled channels rows wait on (the specification's event),
   * one `channels-excluded` line for every other reason.
   */
  exclusions(cycle: CycleState, exclusions: ChannelExclusions): void {
    this.metrics.waitingRows(
      exclusions.waiting.map(({ channel, dueRows }) => ({ channel, rows: dueRows })),
    );
    this.metrics.channelsExcluded(exclusions.channelsByReason);
    if (exclusions.disabled) {
      // A decision, not a mistake: info.
      this.logger.log({
        ...this.ids(cycle),
        msg: 'channel-disabled',
        event: 'channel-disabled',
        ...exclusions.disabled,
      });
    }
    if (!exclusions.summary) return;
    const line = {
      ...this.ids(cycle),
      msg: 'channels-excluded',
      event: 'channels-excluded',
      ...exclusions.summary,
    };
    if (exclusions.misconfigured.length > 0) this.logger.warn(line);
    else this.logger.log(line);
  }

  /** A row's write came back: count it, log it, alert on a terminal failure. */
  async written(
    cycle: CycleState,
    channel: EligibleChannel,
    outcome: RowOutcome,
    result: OutcomeWriteResult,
  ): Promise<void> {
    const { row, transition } = outcome;
    const providerKey = channel.config.providerKey;
    const fields = {
      ...this.ids(cycle),
      notificationId: row.id,
      channel: row.channel,
      providerKey,
    };
    switch (result.kind) {
      case 'lease-lost':
        return;
      case 'claim-lost':
        cycle.counts.claimsLost++;
        this.metrics.claimLost(row.channel);
        this.logger.warn({
          ...fields,
          msg: 'claim-lost',
          event: 'claim-lost',
          note: 'the claim no longer matched: nothing written',
        });
        return;
      case 'not-written':
      case 'held':
        cycle.counts.errors++;
        this.metrics.itemFailed(row.channel);
        this.logger.error({
          ...fields,
          msg: 'item-outcome-unrecorded',
          event: 'item-outcome-unrecorded',
          held: result.kind === 'held',
          ...(result.kind === 'held'
            ? {
                attempts: result.hold.attempts,
                errorCode: result.hold.lastErrorCode,
                nextAttemptAt: (
                  result.hold.nextAttemptAt ?? result.hold.scheduledAt
                )?.toISOString(),
              }
            : {}),
          error: errorText(result.error),
        });
        return;
      case 'written':
        break;
    }
    cycle.timings.settle.add(result.settleMs);
    this.metrics.settled(result.settleMs);
    const lagMs = cycle.now.getTime() - row.dueAt.getTime();
    cycle.recordLag(lagMs);
    cycle.counts.processed++;
    cycle.counts[transition.result]++;
    this.metrics.itemProcessed(transition.result, row.channel, providerKey, lagMs);
    const line = {
      ...fields,
      attempts: transition.attempts,
      errorCode: transition.lastErrorCode,
      lagMs,
    };
    switch (transition.result) {
      case 'sent':
        this.logger.log({ ...line, msg: 'item-sent', event: 'item-sent' });
        return;
      case 'retried':
        this.logger.warn({
          ...line,
          msg: 'item-retried',
          event: 'item-retried',
          nextAttemptAt: transition.nextAttemptAt?.toISOString(),
        });
        return;
      case 'deferred':
        this.logger.warn({
          ...line,
          msg: 'item-deferred',
          event: 'item-deferred',
          nextAttemptAt: (transition.nextAttemptAt ?? transition.scheduledAt)?.toISOString(),
        });
        return;
      case 'terminal':
        this.logger.error({ ...line, msg: 'item-failed-terminal', event: 'item-failed-terminal' });
        await this.alert(
          cycle,
          row,
          providerKey,
          transition.attempts,
          transition.lastErrorCode,
          line,
        );
        return;
    }
  }

  released(cycle: CycleState, rows: number, reason: string): void {
    if (rows === 0) return;
    cycle.counts.skipped += rows;
    this.logger.log({
      ...this.ids(cycle),
      msg: 'claims-released',
      event: 'claims-released',
      rows,
      reason,
    });
  }

  /** A claim failed for a passing reason; the cycle claims again after `retryInMs`. */
  claimFailed(cycle: CycleState, error: unknown, retryInMs: number): void {
    this.metrics.statementRetried('claim');
    this.logger.warn({
      ...this.ids(cycle),
      msg: 'claim-failed',
      event: 'claim-failed',
      retryInMs,
      code: sqlState(error),
      error: errorText(error),
    });
  }

  releaseFailed(cycle: CycleState, rows: number, error: unknown): void {
    this.logger.warn({
      ...this.ids(cycle),
      msg: 'claims-release-failed',
      event: 'claims-release-failed',
      rows,
      note: 'the rows are due again when their claims lapse',
      error: errorText(error),
    });
  }

  leaseLost(cycle: CycleState, cause: LeaseLossCause): void {
    this.logger.warn({
      ...this.ids(cycle),
      msg: 'lease-lost',
      event: 'lease-lost',
      cause,
      fencingToken: cycle.lease.fencingToken,
    });
  }

  rowError(cycle: CycleState, row: ClaimedRow, error: unknown): void {
    cycle.counts.errors++;
    this.metrics.itemFailed(row.channel);
    this.logger.error({
      ...this.ids(cycle),
      msg: 'item-error',
      event: 'item-error',
      notificationId: row.id,
      channel: row.channel,
      error: errorText(error),
    });
  }

  /**
   * An answer after the channel timeout. Inside the settle margin it is the
   * outcome and only counted; after it the attempt was already written off,
   * so what the provider said is lost to the row: logged, because a late
   * success means the notification was delivered although the row says not.
   */
  lateAnswer(cycle: CycleState, row: ClaimedRow, channel: EligibleChannel, late: LateAnswer): void {
    this.metrics.lateAnswer(row.channel, channel.config.providerKey, late.recorded);
    // A delivered one is the LateSuccessRecorder's to report, with what became of it.
    if (late.recorded || late.delivered) return;
    this.logger.warn({
      ...this.ids(cycle),
      msg: 'late-answer-unrecorded',
      event: 'late-answer-unrecorded',
      notificationId: row.id,
      channel: row.channel,
      providerKey: channel.config.providerKey,
      answer: late.answer,
    });
  }

  countFailed(cycle: CycleState, count: string, error: unknown): void {
    this.logger.warn({
      ...this.ids(cycle),
      msg: 'row-count-failed',
      event: 'row-count-failed',
      count,
      note: 'gauges keep their last values; the cycle is not affected',
      error: errorText(error),
    });
  }

  cycleLogFailed(cycle: CycleState, step: 'record' | 'retention', error: unknown): void {
    this.logger.warn({
      ...this.ids(cycle),
      msg: 'cycle-log-failed',
      event: 'cycle-log-failed',
      step,
      note:
        step === 'record'
          ? 'the cycle is missing from the cycle log; the cycle is not affected'
          : 'old cycle log rows stay until the next try; the cycle is not affected',
      error: errorText(error),
    });
  }

  leaseReleaseFailed(cycle: CycleState, error: unknown): void {
    this.logger.error({
      ...this.ids(cycle),
      msg: 'lease-release-failed',
      event: 'lease-release-failed',
      error: errorText(error),
    });
  }

  cycleCompleted(report: CompletedCycleReport, at: Date): void {
    this.metrics.cycleCompleted(at, report.durationMs);
    this.logger.log({
      msg: 'cycle-completed',
      event: 'cycle-completed',
      runId: report.runId,
      correlationId: report.correlationId,
      stopReason: report.stopReason,
      durationMs: report.durationMs,
      maxLagMs: report.maxLagMs,
      ...report.counts,
    });
  }

  private async alert(
    cycle: CycleState,
    row: ClaimedRow,
    providerKey: string,
    attempts: number,
    errorCode: string | null,
    line: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.alerts.terminalFailure({
        notificationId: row.id,
        channel: row.channel,
        providerKey,
        attempts,
        errorCode: errorCode ?? 'unknown',
        runId: cycle.runId,
        correlationId: cycle.correlationId,
      });
    } catch (error) {
      this.logger.error({
        ...line,
        msg: 'alert-sink-failed',
        event: 'alert-sink-failed',
        error: errorText(error),
      });
    }
  }

  private ids(cycle: CycleState): { runId: string; correlationId: string } {
    return { runId: cycle.runId, correlationId: cycle.correlationId };
  }
}
