import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compilePausedChannelKeys } from '../persistence/sql/paused-channel-keys.sql';
import { SqlRunner } from '../persistence/sql-runner';

/**
 * The channels an operator paused (`ChannelPauses` in the operations), as the
 * cycle reads them once per cycle to leave them out of the claim.
 */
@Injectable()
export class PausedChannels {
  private readonly statement: ReturnType<typeof compilePausedChannelKeys>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.statement = compilePausedChannelKeys(dataSource);
  }

  async keys(): Promise<ReadonlySet<string>> {
    const rows = await this.sql.run<{ channel: string }>(this.statement, this.statement.values({}));
    return new Set(rows.map((row) => row.channel));
  }
}
