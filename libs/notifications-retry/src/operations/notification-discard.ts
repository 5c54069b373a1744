import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import {
  NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
  NOTIFICATION_DISPATCHED_TOPIC,
} from '../outbox/notification-dispatched-event';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { optionalChoice, optionalDate, optionalText, requiredUuid } from './query-values';
import { compileDiscardBatch } from './sql/discard-batch.sql';
import { compileDiscardPreview } from './sql/discard-preview.sql';
import { compileInsertOperatorAction } from './sql/insert-operator-action.sql';
import { compileUpdateOperatorActionRows } from './sql/update-operator-action-rows.sql';

export const DISCARD_STATES = ['due', 'deferred', 'retrying'] as const;

/** Which rows a discard takes; ids or a channel must be named. */
export interface DiscardFilter {
  readonly ids?: readonly string[];
  readonly channel?: string;
  readonly errorCode?: string;
  /** Rows updated at or after this time. */
  readonly since?: Date;
  readonly state?: (typeof DISCARD_STATES)[number];
}

/** The code a discarded row and its Failed event carry. */
export const DISCARD_ERROR_CODE = 'operator_discarded';
/** The row's stored error text: fixed, so no operator text (or personal data in it) lands there. */
export const DISCARD_ERROR_MESSAGE = 'discarded by an operator (see notification_operator_actions)';
export const DISCARD_BATCH_SIZE = 500;
export const MAX_DISCARD_IDS = 10_000;

interface ValidDiscardFilter {
  readonly ids?: string[];
  readonly channel?: string;
  readonly errorCode?: string;
  readonly since?: Date;
  readonly state?: (typeof DISCARD_STATES)[number];
}

/**
 * Ends rows that must never be sent (a recalled message, a wrong batch): a
 * Pending row with a send time or a Failed row with a next attempt becomes
 * terminal Failed (`operator_discarded`) with its Failed outbox event, in the
 * same statement, so consumers hear the notification's end as they would from
 * the cycle. Never a Sent or terminal row, never one a worker holds. Batches
 * of {@link DISCARD_BATCH_SIZE}, each one statement; audited as `discard`
 * with each row's former state in `notification_operator_action_rows`.
 */
@Injectable()
export class NotificationDiscard {
  private readonly statements: {
    readonly preview: ReturnType<typeof compileDiscardPreview>;
    readonly batch: ReturnType<typeof compileDiscardBatch>;
    readonly insertAction: ReturnType<typeof compileInsertOperatorAction>;
    readonly updateActionRows: ReturnType<typeof compileUpdateOperatorActionRows>;
  };

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.statements = {
      preview: compileDiscardPreview(dataSource),
      batch: compileDiscardBatch(dataSource),
      insertAction: compileInsertOperatorAction(dataSource),
      updateActionRows: compileUpdateOperatorActionRows(dataSource),
    };
  }

  /** Rows a discard of the filter would take now; nothing changes. */
  async preview(filter: DiscardFilter): Promise<{ rows: number }> {
    const valid = validateDiscardFilter(filter);
    const { preview } = this.statements;
    const [row] = await this.sql.run<{ rows: number }>(
      preview,
      preview.values(filterValues(valid)),
    );
    return { rows: row?.rows ?? 0 };
  }

  async discard(
    filter: DiscardFilter,
    operator: OperatorContext,
  ): Promise<{ actionId: string; rows: number }> {
    const valid = validateDiscardFilter(filter);
    const who = validateOperatorContext(operator ?? { actor: '', reason: '' });
    const { insertAction, batch, updateActionRows } = this.statements;
    // The audit row first: every batch's rows name it, and a discard cut half-way is still on record.
    const [action] = await this.sql.run<{ id: string }>(
      insertAction,
      insertAction.values({
        action: 'discard',
        actor: who.actor,
        reason: who.reason,
        filter: JSON.stringify(describeFilter(valid)),
        rows: 0,
      }),
    );
    if (!action) throw new Error('the discard audit row was not written');
    const values = batch.values({
      ...filterValues(valid),
      batchSize: DISCARD_BATCH_SIZE,
      actionId: action.id,
      discardCode: DISCARD_ERROR_CODE,
      discardMessage: DISCARD_ERROR_MESSAGE,
      eventTopic: NOTIFICATION_DISPATCHED_TOPIC,
      eventContractVersion: NOTIFICATION_DISPATCHED_CONTRACT_VERSION,
    });
    let rows = 0;
    for (;;) {
      const count = (await this.sql.run<{ id: string }>(batch, values)).length;
      rows += count;
      if (count < DISCARD_BATCH_SIZE) break;
    }
    await this.sql.run(updateActionRows, updateActionRows.values({ actionId: action.id, rows }));
    return { actionId: action.id, rows };
  }
}

function validateDiscardFilter(filter: DiscardFilter): ValidDiscardFilter {
  if (typeof filter !== 'object' || filter === null) {
    throw new InvalidOperationInputError('filter', 'must name ids or a channel');
  }
  const channel = optionalText('channel', filter.channel);
  const errorCode = optionalText('errorCode', filter.errorCode);
  const since = optionalDate('since', filter.since);
  const state = optionalChoice('state', filter.state, DISCARD_STATES);
  let ids: string[] | undefined;
  if (filter.ids !== undefined) {
    if (
      !Array.isArray(filter.ids) ||
      filter.ids.length === 0 ||
      filter.ids.length > MAX_DISCARD_IDS
    ) {
      throw new InvalidOperationInputError(
        'ids',
        `must list from 1 to ${MAX_DISCARD_IDS} notification ids; got ${Array.isArray(filter.ids) ? `${filter.ids.length}` : JSON.stringify(filter.ids)}`,
      );
    }
    ids = [...new Set((filter.ids as readonly unknown[]).map((id) => requiredUuid('ids', id)))];
  }
  if (ids === undefined && channel === undefined) {
    // A discard is irreversible for the recipient: "every row of every channel" is never a default.
    throw new InvalidOperationInputError('filter', 'must name ids or a channel');
  }
  return {
    ...(ids !== undefined ? { ids } : {}),
    ...(channel !== undefined ? { channel } : {}),
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(state !== undefined ? { state } : {}),
  };
}

function filterValues(filter: ValidDiscardFilter) {
  return {
    ids: filter.ids ?? null,
    channel: filter.channel ?? null,
    errorCode: filter.errorCode ?? null,
    since: filter.since ?? null,
    state: filter.state ?? null,
  };
}

/** The filter as the audit stores it (JSON, no personal data). */
function describeFilter(filter: ValidDiscardFilter): Record<string, unknown> {
  return {
    ...filter,
    ...(filter.since !== undefined ? { since: filter.since.toISOString() } : {}),
  };
}
