import type {
  AttemptHistoryEntry,
  NotificationDetail,
  NotificationSummary,
  OutboxEventSummary,
} from '@pin/notifications-retry';

/*
 * What the console shows of a row: only the contract's fields, copied one by
 * one, so that a field the library may add later (an address, a payload)
 * never reaches a page or a JSON answer unless someone adds it here.
 */

export function shownSummary(row: NotificationSummary): NotificationSummary {
  return {
    id: row.id,
    channel: row.channel,
    status: row.status,
    maskedAddress: row.maskedAddress,
    attempts: row.attempts,
    errorCode: row.errorCode,
    dueAt: row.dueAt,
    updatedAt: row.updatedAt,
    claimedUntil: row.claimedUntil,
  };
}

export function shownDetail(row: NotificationDetail): NotificationDetail {
  return {
    ...shownSummary(row),
    tenantId: row.tenantId,
    createdAt: row.createdAt,
    sentAt: row.sentAt,
    scheduledAt: row.scheduledAt,
    nextAttemptAt: row.nextAttemptAt,
    providerMessageId: row.providerMessageId,
    errorMessage: row.errorMessage,
    eventSequence: row.eventSequence,
    history: (row.history ?? []).map(shownAttempt),
  };
}

function shownAttempt(entry: AttemptHistoryEntry): AttemptHistoryEntry {
  return {
    attempt: entry.attempt,
    at: entry.at,
    outcome: entry.outcome,
    errorCode: entry.errorCode,
    httpStatus: entry.httpStatus,
    error: entry.error,
    latencyMs: entry.latencyMs,
  };
}

export function shownOutboxRow(row: OutboxEventSummary): OutboxEventSummary {
  return {
    id: row.id,
    messageKey: row.messageKey,
    topic: row.topic,
    createdAt: row.createdAt,
    attempts: row.attempts,
    lastError: row.lastError,
    parkedAt: row.parkedAt,
    sequence: row.sequence,
  };
}
