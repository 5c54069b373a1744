import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { maskAddress } from './mask-address';
import { redactStoredCode, redactStoredError } from '../privacy/redact-stored-error';
import { TERMINAL_FAILURES_LIST_SQL } from './sql/terminal-failures-list.sql';
import { TERMINAL_FAILURES_STATS_SQL } from './sql/terminal-failures-stats.sql';
import {
  filterParams,
  validateRedriveFilter,
  type TerminalFailureFilter,
} from './terminal-failure-filter';

/** One terminal Failed row as an operator sees it: the address masked, no subject or body. */
export interface TerminalFailureRow {
  readonly id: string;
  readonly channel: string;
  readonly maskedAddress: string;
  readonly attempts: number;
  readonly errorCode: string | null;
  /** Stored redacted by the worker: no personal data. */
  readonly errorMessage: string | null;
  readonly failedAt: Date;
  readonly createdAt: Date;
}

/** Terminal Failed rows of one channel and error code. */
export interface TerminalFailureStat {
  readonly channel: string;
  readonly errorCode: string | null;
  readonly count: number;
  readonly oldest: Date;
  readonly newest: Date;
}

export const DEFAULT_TERMINAL_LIST_LIMIT = 50;
export const MAX_TERMINAL_LIST_LIMIT = 1_000;

interface ListRow {
  id: string;
  channel: string;
  recipient_address: string;
  subject: string | null;
  body: string;
  attempts: number;
  last_error_code: string | null;
  last_error_message: string | null;
  failed_at: Date;
  created_at: Date;
}

interface StatRow {
  channel: string;
  error_code: string | null;
  count: number;
  oldest: Date;
  newest: Date;
}

/** Read-only views of terminal Failed rows (Failed with no next attempt) for manual analysis. */
@Injectable()
export class TerminalFailures {
  constructor(@InjectNotificationsRetryDataSource() private readonly dataSource: DataSource) {}

  async list(
    filter: TerminalFailureFilter = {},
    limit: number = DEFAULT_TERMINAL_LIST_LIMIT,
  ): Promise<TerminalFailureRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TERMINAL_LIST_LIMIT) {
      throw new InvalidOperationInputError(
        'limit',
        `must be an integer from 1 to ${MAX_TERMINAL_LIST_LIMIT}; got ${String(limit)}`,
      );
    }
    const valid = validateRedriveFilter(filter);
    const rows: ListRow[] = await this.dataSource.query(TERMINAL_FAILURES_LIST_SQL, [
      ...filterParams(valid),
      limit,
    ]);
    return rows.map((row) => {
      const error = redactStoredError(
        { code: row.last_error_code, message: row.last_error_message },
        {
          id: row.id,
          recipientAddress: row.recipient_address,
          subject: row.subject,
          body: row.body,
        },
      );
      return {
        id: row.id,
        channel: row.channel,
        maskedAddress: maskAddress(row.recipient_address),
        attempts: row.attempts,
        errorCode: error.code,
        errorMessage: error.message,
        failedAt: row.failed_at,
        createdAt: row.created_at,
      };
    });
  }

  async stats(filter: TerminalFailureFilter = {}): Promise<TerminalFailureStat[]> {
    const valid = validateRedriveFilter(filter);
    const rows: StatRow[] = await this.dataSource.query(
      TERMINAL_FAILURES_STATS_SQL,
      filterParams(valid),
    );
    return rows.map((row) => ({
      channel: row.channel,
      errorCode: row.error_code === null ? null : redactStoredCode(row.error_code),
      count: row.count,
      oldest: row.oldest,
      newest: row.newest,
    }));
  }
}
