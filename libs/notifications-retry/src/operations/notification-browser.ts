import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import type { BoundStatement } from '../persistence/sql/sql-statement';
import { containsPersonalData } from '../privacy/contains-personal-data';
import { redactStoredCode, redactStoredError } from '../privacy/redact-stored-error';
import type { AttemptHistoryEntry } from '../vocabulary/attempt-history-entry';
import { readAttemptHistory } from './attempt-history';
import { decodeCursor, nextCursor } from './keyset-cursor';
import { maskAddress } from './mask-address';
import { validatePageLimit } from './page-limit';
import {
  optionalDate,
  optionalText,
  optionalUuid,
  requiredChoice,
  requiredUuid,
} from './query-values';
import { compileListClaimedNotifications } from './sql/list-claimed-notifications.sql';
import { compileListDeferredNotifications } from './sql/list-deferred-notifications.sql';
import { compileListDueNotifications } from './sql/list-due-notifications.sql';
import { compileListRetryingNotifications } from './sql/list-retrying-notifications.sql';
import { compileListSentNotifications } from './sql/list-sent-notifications.sql';
import { compileListTerminalNotifications } from './sql/list-terminal-notifications.sql';
import type { NotificationListValue } from './sql/notification-list';
import { compileNotificationStateCounts } from './sql/notification-state-counts.sql';
import { compileReadNotificationDetail } from './sql/read-notification-detail.sql';

export const NOTIFICATION_LIST_STATES = [
  'due',
  'deferred',
  'claimed',
  'retrying',
  'terminal',
  'sent',
] as const;

/**
 * due: due_at reached, no live claim; deferred: Pending with scheduled_at
 * ahead; claimed: a live claim; retrying: Failed with next_attempt_at ahead,
 * no live claim; terminal: Failed with no next attempt; sent: Sent.
 */
export type NotificationListState = (typeof NOTIFICATION_LIST_STATES)[number];

export interface NotificationListQuery {
  readonly state: NotificationListState;
  readonly channel?: string;
  readonly errorCode?: string;
  /** Rows updated at or after this time. */
  readonly since?: Date;
  /** Search by id: the row, if it is in this state. */
  readonly id?: string;
  /** The `next` of the previous page. */
  readonly after?: string;
  /** 1..200, default 50. */
  readonly limit?: number;
}

/** A notification as a list shows it: the address masked, no subject or body. */
export interface NotificationSummary {
  readonly id: string;
  readonly channel: string;
  readonly status: string;
  readonly maskedAddress: string;
  readonly attempts: number;
  readonly errorCode: string | null;
  readonly dueAt: Date | null;
  readonly updatedAt: Date;
  /** When a worker's live claim lapses; null when no worker holds the row. */
  readonly claimedUntil: Date | null;
}

export interface NotificationPage {
  readonly rows: NotificationSummary[];
  /** The cursor of the next page (`after`), null on the last. */
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

export interface NotificationDetail extends NotificationSummary {
  readonly tenantId: string | null;
  readonly createdAt: Date;
  readonly sentAt: Date | null;
  readonly scheduledAt: Date | null;
  readonly nextAttemptAt: Date | null;
  readonly providerMessageId: string | null;
  /** Stored redacted by the worker, redacted again on the way out. */
  readonly errorMessage: string | null;
  readonly eventSequence: number;
  /** Newest last. */
  readonly history: AttemptHistoryEntry[];
}

export const DEFAULT_NOTIFICATION_LIST_LIMIT = 50;
export const MAX_NOTIFICATION_LIST_LIMIT = 200;

interface PersonalColumns {
  id: string;
  recipientAddress: string;
  subject: string | null;
  body: string;
}

interface SummaryRow extends PersonalColumns {
  channel: string;
  status: string;
  attempts: number;
  lastErrorCode: string | null;
  dueAt: Date | null;
  updatedAt: Date;
  claimedUntil: Date | null;
}

interface ListRow extends SummaryRow {
  keyAt: string;
  keyId: string;
}

interface DetailRow extends SummaryRow {
  tenantId: string | null;
  lastErrorMessage: string | null;
  createdAt: Date;
  sentAt: Date | null;
  scheduledAt: Date | null;
  nextAttemptAt: Date | null;
  providerMessageId: string | null;
  eventSequence: number;
  attemptHistory: unknown;
}

/**
 * The console's view of `notifications` by state, in pages (keyset, never
 * OFFSET: a page costs the same deep in the list), per-channel counts and one
 * row's detail with its attempt history. Read-only; never a subject, a body
 * or an address in clear.
 */
@Injectable()
export class NotificationBrowser {
  private readonly lists: Record<NotificationListState, BoundStatement<NotificationListValue>>;
  private readonly countsStatement: ReturnType<typeof compileNotificationStateCounts>;
  private readonly detailStatement: ReturnType<typeof compileReadNotificationDetail>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.lists = {
      due: compileListDueNotifications(dataSource),
      deferred: compileListDeferredNotifications(dataSource),
      claimed: compileListClaimedNotifications(dataSource),
      retrying: compileListRetryingNotifications(dataSource),
      terminal: compileListTerminalNotifications(dataSource),
      sent: compileListSentNotifications(dataSource),
    };
    this.countsStatement = compileNotificationStateCounts(dataSource);
    this.detailStatement = compileReadNotificationDetail(dataSource);
  }

  async list(query: NotificationListQuery): Promise<NotificationPage> {
    const state = requiredChoice('state', query?.state, NOTIFICATION_LIST_STATES);
    const channel = optionalText('channel', query.channel);
    const errorCode = optionalText('errorCode', query.errorCode);
    const since = optionalDate('since', query.since);
    const id = optionalUuid('id', query.id);
    const limit = validatePageLimit(query.limit, {
      default: DEFAULT_NOTIFICATION_LIST_LIMIT,
      max: MAX_NOTIFICATION_LIST_LIMIT,
    });
    const after = decodeCursor(state, query.after);
    const statement = this.lists[state];
    const rows = await this.sql.run<ListRow>(
      statement,
      statement.values({
        channel: channel ?? null,
        errorCode: errorCode ?? null,
        since: since ?? null,
        id: id ?? null,
        afterAt: after?.at ?? null,
        afterId: after?.id ?? null,
        limit,
      }),
    );
    return { rows: rows.map((row) => summary(row)), next: nextCursor(state, rows, limit) };
  }

  async counts(): Promise<NotificationStateCounts[]> {
    const rows = await this.sql.run<NotificationStateCounts>(this.countsStatement, []);
    return rows.map((row) => ({
      channel: row.channel,
      due: row.due,
      deferred: row.deferred,
      claimed: row.claimed,
      retrying: row.retrying,
      terminal: row.terminal,
      sentLastHour: row.sentLastHour,
    }));
  }

  async get(id: string): Promise<NotificationDetail | null> {
    const valid = requiredUuid('id', id);
    const [row] = await this.sql.run<DetailRow>(
      this.detailStatement,
      this.detailStatement.values({ id: valid }),
    );
    if (!row) return null;
    const values = personalValues(row);
    const error = redactStoredError(
      { code: row.lastErrorCode, message: row.lastErrorMessage },
      values,
    );
    return {
      ...summary(row),
      tenantId: row.tenantId,
      createdAt: row.createdAt,
      sentAt: row.sentAt,
      scheduledAt: row.scheduledAt,
      nextAttemptAt: row.nextAttemptAt,
      // The worker stores ids that echo the row hashed; another writer of the row may not have.
      providerMessageId:
        row.providerMessageId !== null &&
        containsPersonalData(row.providerMessageId, values, { shapes: false })
          ? '[redacted]'
          : row.providerMessageId,
      errorMessage: error.message,
      eventSequence: row.eventSequence,
      history: readAttemptHistory(row.attemptHistory, values),
    };
  }
}

function personalValues(row: PersonalColumns) {
  return {
    id: row.id,
    recipientAddress: row.recipientAddress,
    subject: row.subject,
    body: row.body,
  };
}

function summary(row: SummaryRow): NotificationSummary {
  return {
    id: row.id,
    channel: row.channel,
    status: row.status,
    maskedAddress: maskAddress(row.recipientAddress),
    attempts: row.attempts,
    errorCode:
      row.lastErrorCode === null ? null : redactStoredCode(row.lastErrorCode, personalValues(row)),
    dueAt: row.dueAt,
    updatedAt: row.updatedAt,
    claimedUntil: row.claimedUntil,
  };
}
