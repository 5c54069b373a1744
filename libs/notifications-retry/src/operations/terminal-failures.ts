import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { maskAddress } from './mask-address';
import { redactStoredCode, redactStoredError } from '../privacy/redact-stored-error';
import { compileTerminalFailuresList } from './sql/terminal-failures-list.sql';
import { compileTerminalFailuresStats } from './sql/terminal-failures-stats.sql';
import {
  filterValues,
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
  recipientAddress: string;
  subject: string | null;
  body: string;
  attempts: number;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  failedAt: Date;
  createdAt: Date;
}

interface StatRow {
  channel: string;
  errorCode: string | null;
  count: number;
  oldest: Date;
  newest: Date;
}

/** Read-only views of terminal Failed rows (Failed with no next attempt) for manual analysis. */
@Injectable()
export class TerminalFailures {
  private readonly listStatement: ReturnType<typeof compileTerminalFailuresList>;
  private readonly statsStatement: ReturnType<typeof compileTerminalFailuresStats>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.listStatement = compileTerminalFailuresList(dataSource);
    this.statsStatement = compileTerminalFailuresStats(dataSource);
  }

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
    const rows = await this.sql.run<ListRow>(
      this.listStatement,
      this.listStatement.values({ ...filterValues(valid), limit }),
    );
    return rows.map((row) => {
      const error = redactStoredError(
        { code: row.lastErrorCode, message: row.lastErrorMessage },
        {
          id: row.id,
          recipientAddress: row.recipientAddress,
          subject: row.subject,
          body: row.body,
        },
      );
      return {
        id: row.id,
        channel: row.channel,
        maskedAddress: maskAddress(row.recipientAddress),
        attempts: row.attempts,
        errorCode: error.code,
        errorMessage: error.message,
        failedAt: row.failedAt,
        createdAt: row.createdAt,
      };
    });
  }

  async stats(filter: TerminalFailureFilter = {}): Promise<TerminalFailureStat[]> {
    const valid = validateRedriveFilter(filter);
    const rows = await this.sql.run<StatRow>(
      this.statsStatement,
      this.statsStatement.values(filterValues(valid)),
    );
    return rows.map((row) => ({
      channel: row.channel,
      errorCode: row.errorCode === null ? null : redactStoredCode(row.errorCode),
      count: row.count,
      oldest: row.oldest,
      newest: row.newest,
    }));
  }
}
