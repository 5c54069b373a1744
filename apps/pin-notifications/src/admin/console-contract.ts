import type { OperatorContext } from '@pin/notifications-retry';

/*
 * The library's operations API as the console uses it (issue 22's contract).
 * Declared here, not imported, so that the console builds and says "not
 * available" on a library that does not have these services yet; the
 * services are looked up by name in `ConsoleOperations`.
 */

export const NOTIFICATION_LIST_STATES = [
  'due',
  'deferred',
  'claimed',
  'retrying',
  'terminal',
  'sent',
] as const;
export type NotificationListState = (typeof NOTIFICATION_LIST_STATES)[number];

export interface NotificationListQuery {
  readonly state: NotificationListState;
  readonly channel?: string;
  readonly errorCode?: string;
  readonly since?: Date;
  readonly id?: string;
  readonly after?: string;
  readonly limit?: number;
}

export interface NotificationSummary {
  readonly id: string;
  readonly channel: string;
  readonly status: string;
  readonly maskedAddress: string;
  readonly attempts: number;
  readonly errorCode: string | null;
  readonly dueAt: Date | null;
  readonly updatedAt: Date;
  readonly claimedUntil: Date | null;
}

export interface Page<Row> {
  readonly rows: readonly Row[];
  readonly next: string | null;
}

export interface NotificationStateCounts {
  readonly channel: string;
  readonly due: number;
  readonly deferred: number;
  readonly claimed: number;
  readonly retrying: number;
  readonly terminal: number;
  readonly sentLastHour: number;
}

export interface AttemptHistoryEntry {
  readonly attempt: number;
  readonly at: string;
  readonly outcome: string;
  readonly errorCode: string | null;
  readonly httpStatus: number | null;
  readonly error: string | null;
  readonly latencyMs: number | null;
}

export interface NotificationDetail extends NotificationSummary {
  readonly tenantId: string | null;
  readonly createdAt: Date;
  readonly sentAt: Date | null;
  readonly scheduledAt: Date | null;
  readonly nextAttemptAt: Date | null;
  readonly providerMessageId: string | null;
  readonly errorMessage: string | null;
  readonly eventSequence: number | string | null;
  readonly history: readonly AttemptHistoryEntry[];
}

export interface NotificationBrowserApi {
  list(query: NotificationListQuery): Promise<Page<NotificationSummary>>;
  counts(): Promise<readonly NotificationStateCounts[]>;
  get(id: string): Promise<NotificationDetail | null>;
}

export const DISCARD_STATES = ['due', 'deferred', 'retrying'] as const;
export type DiscardState = (typeof DISCARD_STATES)[number];

export interface DiscardFilter {
  readonly ids?: string[];
  readonly channel?: string;
  readonly errorCode?: string;
  readonly since?: Date;
  readonly state?: DiscardState;
}

export interface NotificationDiscardApi {
  preview(filter: DiscardFilter): Promise<{ rows: number }>;
  discard(
    filter: DiscardFilter,
    operator: OperatorContext,
  ): Promise<{ actionId: string; rows: number }>;
}

export const OUTBOX_STATES = ['unpublished', 'parked'] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];

export interface OutboxRow {
  readonly id: string;
  readonly messageKey: string;
  readonly topic: string;
  readonly createdAt: Date;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly parkedAt: Date | null;
  readonly sequence: number | string;
}

export interface OutboxOperationsApi {
  list(query: { state: OutboxState; after?: string; limit?: number }): Promise<Page<OutboxRow>>;
  counts(): Promise<{ unpublished: number; parked: number; oldestUnpublishedAgeMs: number | null }>;
  requeue(eventId: string, operator: OperatorContext): Promise<unknown>;
}

export interface AuditRow {
  readonly id: string;
  readonly action: string;
  readonly actor: string;
  readonly reason: string;
  readonly filter: unknown;
  readonly rows: number;
  readonly createdAt: Date;
}

export interface AuditQuery {
  readonly actor?: string;
  readonly action?: string;
  readonly since?: Date;
  readonly text?: string;
  readonly after?: string;
  readonly limit?: number;
}

export interface OperatorAuditLogApi {
  search(query: AuditQuery): Promise<Page<AuditRow>>;
}

export interface CycleRow {
  readonly runId: string;
  readonly instanceId: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly durationMs: number;
  readonly stopReason: string;
  readonly processed: number;
  readonly sent: number;
  readonly retried: number;
  readonly terminal: number;
  readonly deferred: number;
  readonly skipped: number;
  readonly claimsLost: number;
  readonly errors: number;
}

export interface RecentCyclesApi {
  /** The contract says rows newest first; either an array or a page of them is read. */
  list(query: {
    hours?: number;
    limit?: number;
  }): Promise<readonly CycleRow[] | { readonly rows: readonly CycleRow[] }>;
}
