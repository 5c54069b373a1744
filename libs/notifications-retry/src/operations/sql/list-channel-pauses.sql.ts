import type { DataSource } from 'typeorm';
import { NotificationChannelPauseEntity } from '../../persistence/notification-channel-pause.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

/** Every paused channel, with how long it has been paused by the database clock (`pausedForMs`). No parameters. */
export function compileListChannelPauses(dataSource: DataSource): BoundStatement<never> {
  const c = entitySql(dataSource, NotificationChannelPauseEntity);
  const p = new StatementParameters<never>();
  return p.compile(
    'list_channel_pauses',
    `SELECT ${selectColumns(c, ['channel', 'reason', 'pausedBy', 'pausedAt'])},
            (extract(epoch FROM now() - ${c.column('pausedAt')}) * 1000)::bigint AS "pausedForMs"
       FROM ${c.table}
      ORDER BY ${c.column('channel')}`,
  );
}
