import type { DataSource } from 'typeorm';
import { NotificationRetryCycleEntity } from '../../persistence/notification-retry-cycle.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ListRecentCyclesValue = 'hours' | 'limit';

/** Cycles finished in the last `hours` (database clock), newest first, at most `limit`: notification_retry_cycles_finished_at. */
export function compileListRecentCycles(
  dataSource: DataSource,
): BoundStatement<ListRecentCyclesValue> {
  const c = entitySql(dataSource, NotificationRetryCycleEntity);
  const p = new StatementParameters<ListRecentCyclesValue>();
  const finished = c.column('finishedAt');
  return p.compile(
    'list_recent_cycles',
    `SELECT ${selectColumns(c, [
      'runId',
      'instanceId',
      'startedAt',
      'finishedAt',
      'durationMs',
      'stopReason',
      'processed',
      'sent',
      'retried',
      'terminal',
      'deferred',
      'skipped',
      'claimsLost',
      'errors',
    ])}
       FROM ${c.table}
      WHERE ${finished} >= now() - ${p.ref('hours')}::double precision * interval '1 hour'
      ORDER BY ${finished} DESC, ${c.column('runId')} DESC
      LIMIT ${p.ref('limit')}`,
  );
}
