import type { NotificationDispatchedHeaders } from '../outbox/notification-dispatched-event';
import type { OutboxWriter } from '../outbox/outbox.writer';
import { attemptRecord } from './attempt-record';
import type { ClaimedRow } from './claimed-row';
import type { EligibleChannel } from './cycle-state';
import type { CallResult } from './provider-caller';
import {
  decideTransition,
  isAllowedTransition,
  unrecordedOutcomeTransition,
} from './row-transition';
import type { RowSettlement } from './row-settlement';

/**
 * What a claimed row becomes after its call: a call cut by the worker hands
 * the claim back; anything else is an outcome (DESIGN §3 "Outcome"), with its
 * outbox event when final and the hold to write if the outcome cannot be.
 * `processedAt` is the cycle clock's now; `jitterSample` the backoff jitter.
 */
export function settleRow(
  row: ClaimedRow,
  channel: EligibleChannel,
  call: CallResult,
  processedAt: Date,
  jitterSample: number,
  outbox: OutboxWriter,
  ids: { readonly runId: string; readonly correlationId: string },
): RowSettlement {
  const { outcome } = call;
  if (outcome.kind === 'interrupted') return { kind: 'release', row };
  const transition = decideTransition(row, channel.config, outcome, processedAt, jitterSample);
  if (!isAllowedTransition(row.status, transition.status)) {
    throw new Error(`transition ${row.status} → ${transition.status} violates INV-NTF-5`);
  }
  const event = transition.event
    ? outbox.dispatchedRow(
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
          correlationId: ids.correlationId,
          jobRunId: ids.runId,
          ...(call.traceparent ? { traceparent: call.traceparent } : {}),
        } satisfies NotificationDispatchedHeaders,
      )
    : null;
  // Nothing to hold when no provider was called: such a row simply stays due.
  const hold =
    outcome.kind === 'exhausted'
      ? null
      : unrecordedOutcomeTransition(row, channel.config, transition, processedAt, jitterSample);
  return {
    kind: 'outcome',
    row,
    transition,
    event,
    hold,
    attempt: attemptRecord(outcome, call.latencyMs),
    decidedAt: call.decidedAt,
  };
}
