import type { DataSource } from 'typeorm';
import { NotificationRetryCycleEntity } from '../notification-retry-cycle.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type DeleteExpiredCyclesValue = 'retentionMs' | 'limit';

/**
 * Deletes up to `limit` rows of the cycle log that finished more than
 * `retentionMs` ago by the database clock, oldest first (the finished_at
 * index), and returns how many (`deleted`). A small batch keeps the statement
 * short; rows another session holds are skipped, not waited for.
 */
export function compileDeleteExpiredCycles(
  dataSource: DataSource,
): BoundStatement<DeleteExpiredCyclesValue> {
  const c = entitySql(dataSource, NotificationRetryCycleEntity);
  const p = new StatementParameters<DeleteExpiredCyclesValue>();
  const runId = c.column('runId');
  const finishedAt = c.column('finishedAt');
  return p.compile(
    'delete_expired_cycles',
    `WITH expired AS (
       SELECT ${runId} AS run_id FROM ${c.table}
        WHERE ${finishedAt} < now() - ${p.ref('retentionMs')}::bigint * interval '1 millisecond'
        ORDER BY ${finishedAt}
        LIMIT ${p.ref('limit')}::int
          FOR UPDATE SKIP LOCKED
     ),
     deleted AS (
       DELETE FROM ${c.table} AS c USING expired WHERE c.${runId} = expired.run_id RETURNING 1
     )
     SELECT count(*)::int AS deleted FROM deleted`,
  );
}
