import type { DataSource } from 'typeorm';
import { NotificationChannelPauseEntity } from '../notification-channel-pause.entity';
import { entitySql } from './entity-sql';
import { selectColumns } from './select-columns';
import { StatementParameters, type BoundStatement } from './sql-statement';

/** The keys of the paused channels (`channel`): what the cycle leaves out of the claim. No parameters. */
export function compilePausedChannelKeys(dataSource: DataSource): BoundStatement<never> {
  const c = entitySql(dataSource, NotificationChannelPauseEntity);
  const p = new StatementParameters<never>();
  return p.compile(
    'paused_channel_keys',
    `SELECT ${selectColumns(c, ['channel'])} FROM ${c.table}`,
  );
}
