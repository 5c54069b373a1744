import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { context as otelContext, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { attemptDelivery } from './attempt-delivery';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import { ChannelPacer } from './channel-pacer';
import type { ClaimedRow } from './claimed-row';
import { CycleReporter } from './cycle-reporter';
import type { CycleState, EligibleChannel } from './cycle-state';
import { LateSuccessRecorder } from './late-success-recorder';
import { ProviderCallsInFlight } from './provider-calls-in-flight';

/** What a call came to, and the trace context for the outbox headers. */
export interface CallResult {
  readonly outcome: AttemptOutcome;
  /** The call span's W3C traceparent (none without an OpenTelemetry SDK, or without a call). */
  readonly traceparent: string | undefined;
  /** `performance.now()` when the outcome was known. */
  readonly decidedAt: number;
  /**
   * From the adapter's call to its outcome (a timeout's: to the write-off), for
   * the attempt history; null when no call was made (exhausted, circuit open).
   */
  readonly latencyMs: number | null;
}

/**
 * Room the claim keeps after the last answer it waits for, for the outcome's
 * write to reach the database while the claim is still live.
 */
export const CLAIM_WRITE_ALLOWANCE_MS = 250;

/**
 * Calls one claimed row's provider (DESIGN §3.4), with no transaction and no
 * connection: paced to the channel's rate, through the provider's circuit
 * breaker, in a span under the cycle's, cut at the channel timeout; an answer
 * is awaited past it only while the row's claim stays live. A row whose
 * attempts already reach the channel's maximum is not called. A success that
 * answers after the attempt was written off anyway goes to the
 * LateSuccessRecorder, whenever it comes.
 */
@Injectable()
export class ProviderCaller {
  private readonly tracer = trace.getTracer('@pin/notifications-retry');

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly pacer: ChannelPacer,
    private readonly callsInFlight: ProviderCallsInFlight,
    private readonly reporter: CycleReporter,
    private readonly lateSuccesses: LateSuccessRecorder,
  ) {}

  async call(cycle: CycleState, row: ClaimedRow, channel: EligibleChannel): Promise<CallResult> {
    if (row.attempts >= channel.config.maxAttempts) {
      return {
        outcome: { kind: 'exhausted' },
        traceparent: undefined,
        decidedAt: performance.now(),
        latencyMs: null,
      };
    }
    const span = this.tracer.startSpan(
      'notifications.retry.provider.send',
      {
        attributes: {
          'notifications.notification_id': row.id,
          'notifications.run_id': cycle.runId,
          'notifications.correlation_id': cycle.correlationId,
          'notifications.channel': row.channel,
          'notifications.provider': channel.config.providerKey,
        },
      },
      trace.setSpan(otelContext.active(), cycle.span),
    );
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(otelContext.active(), span), carrier);
    // The write of a late success, if one came: until it is done the call counts as in flight, so
    // this instance does not claim the notification again only to find it Sent. Without one the
    // call's settling is the end of it (no promise to adopt).
    let lateWrite: Promise<void> | undefined;
    // Set when the adapter is called: after the pacer's wait and the circuit's verdict, which are
    // the worker's time, not the provider's.
    let callStartedAt: number | null = null;
    try {
      const rate = channel.config.rateLimitPerSec;
      const attempt = (): Promise<AttemptOutcome> =>
        attemptDelivery(
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
          cycle.interrupt,
          {
            settleMarginMs: this.settleMarginMs(row, channel),
            onCallStarted: (settled) => {
              callStartedAt = performance.now();
              this.callsInFlight.track(
                row.id,
                settled.then(
                  () => lateWrite,
                  () => lateWrite,
                ),
              );
            },
            onLateAnswer: (late) => this.reporter.lateAnswer(cycle, row, channel, late),
            onLateSuccess: (success) => {
              lateWrite = this.lateSuccesses.record({
                row,
                channel,
                success,
                runId: cycle.runId,
                correlationId: cycle.correlationId,
                traceparent: carrier.traceparent,
                latencyMs: callStartedAt === null ? null : performance.now() - callStartedAt,
              });
            },
          },
        );
      // An unpaced channel's call goes straight through: no wait to await, no promise for it.
      const outcome = await this.circuits.call(
        channel.config.providerKey,
        rate === null ? attempt : () => this.pacer.awaitCallSlot(row.channel, rate).then(attempt),
        cycle,
      );
      span.setAttribute('notifications.outcome', outcome.kind);
      if (outcome.kind !== 'sent') {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: 'errorCode' in outcome ? outcome.errorCode : outcome.kind,
        });
      }
      const decidedAt = performance.now();
      return {
        outcome,
        traceparent: carrier.traceparent,
        decidedAt,
        latencyMs: callStartedAt === null ? null : decidedAt - callStartedAt,
      };
    } finally {
      span.end();
    }
  }

  /**
   * The settle margin, cut so that the last answer awaited still leaves the
   * claim room for its write: an answer after the claim lapsed could race a
   * second worker's call for the same notification.
   */
  private settleMarginMs(row: ClaimedRow, channel: EligibleChannel): number {
    const claimLeftMs =
      row.claimedUntil - performance.now() - channel.config.timeoutMs - CLAIM_WRITE_ALLOWANCE_MS;
    return Math.max(0, Math.min(this.options.settleMarginMs, Math.floor(claimLeftMs)));
  }
}
