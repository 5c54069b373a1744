import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compileCountFailedBacklog } from '../persistence/sql/count-failed-backlog.sql';
import { compileCountWaitingRows } from '../persistence/sql/count-waiting-rows.sql';
import { SqlRunner } from '../persistence/sql-runner';

/**
 * Each count stops here per channel: what a gauge and an alert threshold need
 * to know, at a cost that does not grow with a backlog of millions.
 */
export const ROW_COUNT_CAP = 100_000;

/** Rows of one channel; `rows` is at most ROW_COUNT_CAP. */
export interface ChannelRowCount {
  readonly channel: string;
  readonly rows: number;
}

/**
 * The counts a cycle reports (DESIGN §3.2): due rows of the channels it left
 * out, and the failed backlog. Separate reads, bounded, off the claim path:
 * a count that fails or times out costs a stale gauge, never a cycle.
 */
@Injectable()
export class RowCounts {
  private readonly waitingStatement;
  private readonly backlogStatement;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.waitingStatement = compileCountWaitingRows(dataSource);
    this.backlogStatement = compileCountFailedBacklog(dataSource);
  }

  /** Due rows at `now` of every channel not in `claimed`, the catalog's or not. */
  waiting(claimed: readonly string[], now: Date, connectBy?: number): Promise<ChannelRowCount[]> {
    return this.sql.run<ChannelRowCount>(
      this.waitingStatement,
      this.waitingStatement.values({ claimed, now, cap: ROW_COUNT_CAP }),
      connectBy,
    );
  }

  /** Failed rows awaiting a retry (due or not), per channel. */
  failedBacklog(connectBy?: number): Promise<ChannelRowCount[]> {
    return this.sql.run<ChannelRowCount>(
      this.backlogStatement,
      this.backlogStatement.values({ cap: ROW_COUNT_CAP }),
      connectBy,
    );
  }
}
