import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { validatePageLimit } from './page-limit';
import { compileListRecentCycles } from './sql/list-recent-cycles.sql';

export interface RecentCyclesQuery {
  /** The window, by the database clock: default 6, at most 48. */
  readonly hours?: number;
  readonly limit?: number;
}

/** One completed cycle as `notification_retry_cycles` keeps it. */
export interface RecentCycle {
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

export const DEFAULT_RECENT_CYCLE_HOURS = 6;
export const MAX_RECENT_CYCLE_HOURS = 48;
/** One cycle a minute over the default window. */
export const DEFAULT_RECENT_CYCLE_LIMIT = 360;
/** One cycle a minute over the longest window. */
export const MAX_RECENT_CYCLE_LIMIT = 2_880;

/** The last cycles, newest first: the console's cycle page and chart. */
@Injectable()
export class RecentCycles {
  private readonly statement: ReturnType<typeof compileListRecentCycles>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.statement = compileListRecentCycles(dataSource);
  }

  async list(query: RecentCyclesQuery = {}): Promise<RecentCycle[]> {
    const hours = query.hours ?? DEFAULT_RECENT_CYCLE_HOURS;
    if (
      typeof hours !== 'number' ||
      !Number.isFinite(hours) ||
      hours <= 0 ||
      hours > MAX_RECENT_CYCLE_HOURS
    ) {
      throw new InvalidOperationInputError(
        'hours',
        `must be a number above 0 and at most ${MAX_RECENT_CYCLE_HOURS}; got ${JSON.stringify(query.hours)}`,
      );
    }
    const limit = validatePageLimit(query.limit, {
      default: DEFAULT_RECENT_CYCLE_LIMIT,
      max: MAX_RECENT_CYCLE_LIMIT,
    });
    const rows = await this.sql.run<RecentCycle>(
      this.statement,
      this.statement.values({ hours, limit }),
    );
    return rows.map((row) => ({
      runId: row.runId,
      instanceId: row.instanceId,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
      durationMs: row.durationMs,
      stopReason: row.stopReason,
      processed: row.processed,
      sent: row.sent,
      retried: row.retried,
      terminal: row.terminal,
      deferred: row.deferred,
      skipped: row.skipped,
      claimsLost: row.claimsLost,
      errors: row.errors,
    }));
  }
}
