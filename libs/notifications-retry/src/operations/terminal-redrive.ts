import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { compileInsertOperatorAction } from './sql/insert-operator-action.sql';
import { compileRedriveBatch } from './sql/redrive-batch.sql';
import { compileRedrivePreview } from './sql/redrive-preview.sql';
import { compileUpdateOperatorActionRows } from './sql/update-operator-action-rows.sql';
import {
  describeFilter,
  isEmptyFilter,
  redriveFilterValues,
  validateRedriveFilter,
  type RedriveFilter,
} from './terminal-failure-filter';

export const REDRIVE_BATCH_SIZE = 500;

export interface RedriveRequest {
  readonly filter: RedriveFilter;
  /** Required, and only meaningful, when the filter narrows nothing: a redrive of every terminal row is never an accident. */
  readonly all?: boolean;
  /** Default true: nothing changes, the preview says what would. */
  readonly dryRun?: boolean;
  /** Required to apply; optional for a dry run. */
  readonly operator?: OperatorContext;
}

/** Rows a redrive takes (or would), by channel × error code. */
export interface RedrivePreviewGroup {
  readonly channel: string;
  readonly errorCode: string | null;
  /** Terminal rows the redrive resets. */
  readonly eligible: number;
  /** Terminal rows left alone because a worker holds a live claim on them. */
  readonly claimed: number;
}

export interface RedriveResult {
  readonly dryRun: boolean;
  readonly filter: Record<string, unknown>;
  readonly preview: readonly RedrivePreviewGroup[];
  /** Rows that would be (dry run) or were reset. */
  readonly eligible: number;
  readonly claimed: number;
  /** Rows reset by this run: 0 on a dry run. */
  readonly redriven: number;
  readonly batches: number;
  /** The audit row of an applied redrive. */
  readonly actionId: string | null;
}

/**
 * Terminal Failed → Failed due now with a fresh attempt budget, for rows whose
 * cause was fixed (a provider back, a template repaired). Dry run by default.
 * Never touches a Sent or Pending row, a Failed row still scheduled, or a row
 * a worker holds (a live claim, a row lock); resets in batches of
 * {@link REDRIVE_BATCH_SIZE}, each one statement that also keeps every row's
 * old attempts and error in `notification_redriven_rows`. Running it twice is
 * harmless: reset rows are no longer terminal.
 */
@Injectable()
export class TerminalRedrive {
  private readonly statements: {
    readonly insertAction: ReturnType<typeof compileInsertOperatorAction>;
    readonly batch: ReturnType<typeof compileRedriveBatch>;
    readonly preview: ReturnType<typeof compileRedrivePreview>;
    readonly updateActionRows: ReturnType<typeof compileUpdateOperatorActionRows>;
  };

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.statements = {
      insertAction: compileInsertOperatorAction(dataSource),
      batch: compileRedriveBatch(dataSource),
      preview: compileRedrivePreview(dataSource),
      updateActionRows: compileUpdateOperatorActionRows(dataSource),
    };
  }

  async redrive(request: RedriveRequest): Promise<RedriveResult> {
    const filter = validateRedriveFilter(request.filter);
    if (isEmptyFilter(filter) && request.all !== true) {
      throw new InvalidOperationInputError(
        'filter',
        'is empty: name a channel, an error code, a since time or ids, or pass all to redrive every terminal row',
      );
    }
    const dryRun = request.dryRun ?? true;
    const operator =
      dryRun && request.operator === undefined
        ? undefined
        : validateOperatorContext(request.operator ?? { actor: '', reason: '' });
    const preview = await this.preview(filter);
    const eligible = preview.reduce((sum, group) => sum + group.eligible, 0);
    const claimed = preview.reduce((sum, group) => sum + group.claimed, 0);
    const described = describeFilter(filter);
    if (dryRun || !operator) {
      return {
        dryRun: true,
        filter: described,
        preview,
        eligible,
        claimed,
        redriven: 0,
        batches: 0,
        actionId: null,
      };
    }

    const { insertAction, batch, updateActionRows } = this.statements;
    // Each statement commits on its own, as before: the audit row first, then every batch
    // (one atomic reset + its redriven rows), then the audit's row count.
    const [action] = await this.sql.run<{ id: string }>(
      insertAction,
      insertAction.values({
        action: 'redrive',
        actor: operator.actor,
        reason: operator.reason,
        filter: JSON.stringify(described),
        rows: 0,
      }),
    );
    if (!action) throw new Error('the redrive audit row was not written');
    const actionId = action.id;
    let redriven = 0;
    let batches = 0;
    const batchValues = batch.values({
      ...redriveFilterValues(filter),
      batchSize: REDRIVE_BATCH_SIZE,
      actionId,
    });
    for (;;) {
      const count = (await this.sql.run<{ id: string }>(batch, batchValues)).length;
      batches++;
      redriven += count;
      if (count < REDRIVE_BATCH_SIZE) break;
    }
    await this.sql.run(updateActionRows, updateActionRows.values({ actionId, rows: redriven }));
    return {
      dryRun: false,
      filter: described,
      preview,
      eligible,
      claimed,
      redriven,
      batches,
      actionId,
    };
  }

  private async preview(filter: RedriveFilter): Promise<RedrivePreviewGroup[]> {
    const { preview } = this.statements;
    const rows = await this.sql.run<RedrivePreviewGroup>(
      preview,
      preview.values(redriveFilterValues(filter)),
    );
    return rows.map((row) => ({
      channel: row.channel,
      errorCode: row.errorCode,
      eligible: row.eligible,
      claimed: row.claimed,
    }));
  }
}
