import type { DataSource } from 'typeorm';
import { NotificationRedrivenRowEntity } from '../../persistence/notification-redriven-row.entity';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { liveClaimSql, terminalFilterSql, type RedriveFilterValue } from './terminal-filter.sql';

export type RedriveBatchValue = RedriveFilterValue | 'batchSize' | 'actionId';

/**
 * One batch of a redrive, atomically: terminal Failed rows matching the filter
 * that no worker holds (no live claim, no row lock: SKIP LOCKED) become Failed
 * and due now with a fresh attempt budget (INV-NTF-5: Failed→Failed), and what
 * each row had before goes to notification_redriven_rows under the action.
 * A reset row is no longer terminal, so the next batch (and a second run of
 * the same redrive) cannot take it again.
 * `channel`, `errorCode`, `since`, `ids`: null = any; `batchSize`; `actionId`.
 * Returns the `id` of each row reset.
 */
export function compileRedriveBatch(dataSource: DataSource): BoundStatement<RedriveBatchValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const r = entitySql(dataSource, NotificationRedrivenRowEntity);
  const p = new StatementParameters<RedriveBatchValue>();
  return p.compile(
    'redrive_batch',
    `WITH picked AS (
       SELECT ${selectColumns(n, ['id', 'attempts', 'lastErrorCode', 'lastErrorMessage'])}
         FROM ${n.table}
        WHERE ${terminalFilterSql(n, p, { ids: true })}
          AND NOT (${liveClaimSql(n)})
        ORDER BY ${n.column('updatedAt')}, ${n.column('id')}
        LIMIT ${p.ref('batchSize')}
          FOR UPDATE SKIP LOCKED
     ),
     audit AS (
       INSERT INTO ${r.table}
              (${r.column('actionId')}, ${r.column('notificationId')}, ${r.column('previousAttempts')},
               ${r.column('previousErrorCode')}, ${r.column('previousErrorMessage')})
       SELECT ${p.ref('actionId')}::uuid, picked."id", picked."attempts", picked."lastErrorCode",
              picked."lastErrorMessage"
         FROM picked
     )
     UPDATE ${n.table} AS n
        SET ${n.column('nextAttemptAt')} = now(),
            ${n.column('attempts')} = 0,
            ${n.column('lastErrorCode')} = NULL,
            ${n.column('lastErrorMessage')} = NULL,
            ${n.column('claimToken')} = NULL,
            ${n.column('claimExpiresAt')} = NULL,
            ${n.column('updatedAt')} = now()
       FROM picked
      WHERE n.${n.column('id')} = picked."id"
     RETURNING n.${n.column('id')} AS "id"`,
  );
}
