import type { DataSource } from 'typeorm';
import { NotificationChannelPauseEntity } from '../../persistence/notification-channel-pause.entity';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type PauseChannelValue = 'channel' | 'reason' | 'actor';

/**
 * Pauses a channel and audits it in one statement; a channel already paused
 * keeps its first pause (no row returned, nothing audited).
 * `channel`, `reason`, `actor`.
 */
export function compilePauseChannel(dataSource: DataSource): BoundStatement<PauseChannelValue> {
  const c = entitySql(dataSource, NotificationChannelPauseEntity);
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<PauseChannelValue>();
  const channel = p.ref('channel');
  const reason = p.ref('reason');
  const actor = p.ref('actor');
  return p.compile(
    'pause_channel',
    `WITH paused AS (
       INSERT INTO ${c.table} (${c.column('channel')}, ${c.column('reason')}, ${c.column('pausedBy')})
       VALUES (${channel}::text, ${reason}::text, ${actor}::text)
       ON CONFLICT (${c.column('channel')}) DO NOTHING
       RETURNING ${selectColumns(c, ['channel', 'reason', 'pausedBy', 'pausedAt'])}
     ),
     audit AS (
       INSERT INTO ${a.table} (${a.column('action')}, ${a.column('actor')}, ${a.column('reason')},
                               ${a.column('filter')}, ${a.column('rows')})
       SELECT 'channel-pause', ${actor}::text, ${reason}::text,
              jsonb_build_object('channel', paused."channel"), 0
         FROM paused
     )
     SELECT "channel", "reason", "pausedBy", "pausedAt" FROM paused`,
  );
}
