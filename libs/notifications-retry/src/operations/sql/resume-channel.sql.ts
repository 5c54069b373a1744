import type { DataSource } from 'typeorm';
import { NotificationChannelPauseEntity } from '../../persistence/notification-channel-pause.entity';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ResumeChannelValue = 'channel' | 'reason' | 'actor';

/**
 * Resumes a channel and audits it in one statement; a channel not paused
 * returns no row and nothing is audited. `channel`, `reason`, `actor`.
 */
export function compileResumeChannel(dataSource: DataSource): BoundStatement<ResumeChannelValue> {
  const c = entitySql(dataSource, NotificationChannelPauseEntity);
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<ResumeChannelValue>();
  const channel = p.ref('channel');
  const reason = p.ref('reason');
  const actor = p.ref('actor');
  return p.compile(
    'resume_channel',
    `WITH resumed AS (
       DELETE FROM ${c.table} WHERE ${c.column('channel')} = ${channel}::text
       RETURNING ${selectColumns(c, ['channel', 'reason', 'pausedBy', 'pausedAt'])}
     ),
     audit AS (
       INSERT INTO ${a.table} (${a.column('action')}, ${a.column('actor')}, ${a.column('reason')},
                               ${a.column('filter')}, ${a.column('rows')})
       SELECT 'channel-resume', ${actor}::text, ${reason}::text,
              jsonb_build_object('channel', resumed."channel", 'pausedAt', resumed."pausedAt",
                                 'pauseReason', resumed."reason"), 0
         FROM resumed
     )
     SELECT "channel", "reason", "pausedBy", "pausedAt" FROM resumed`,
  );
}
