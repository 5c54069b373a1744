import type { DataSource } from 'typeorm';
import { NotificationChannelEntity } from '../../persistence/notification-channel.entity';
import { NotificationOperatorActionRowEntity } from '../../persistence/notification-operator-action-row.entity';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { withEventSequence } from '../../persistence/sql/event-sequence.sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { discardFilterSql, type DiscardFilterValue } from './discard-filter';

export type DiscardBatchValue =
  | DiscardFilterValue
  | 'batchSize'
  | 'actionId'
  | 'discardCode'
  | 'discardMessage'
  | 'eventTopic'
  | 'eventContractVersion';

/**
 * One batch of a discard, atomically: rows of the filter no worker holds (no
 * live claim, no row lock: SKIP LOCKED) become terminal Failed with
 * `discardCode` / `discardMessage` and their claim cleared; each gets its
 * Failed outbox event with the next `event_sequence`, the payload and headers
 * the cycle writes for a terminal Failed (providerKey from the channel's
 * catalog row, correlationId and jobRunId the action's id); and what each row
 * was goes to notification_operator_action_rows under the action. A discarded
 * row is terminal, so no later batch takes it again.
 * Returns the `id` of each row discarded.
 */
export function compileDiscardBatch(dataSource: DataSource): BoundStatement<DiscardBatchValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const c = entitySql(dataSource, NotificationChannelEntity);
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const r = entitySql(dataSource, NotificationOperatorActionRowEntity);
  const p = new StatementParameters<DiscardBatchValue>();
  const actionId = p.ref('actionId');
  const discardCode = p.ref('discardCode');
  const payload = `jsonb_build_object(
           'notificationId', d."id", 'tenantId', d."tenantId", 'channel', d."channel",
           'status', 'Failed', 'attempts', d."attempts", 'providerKey', c.${c.column('providerKey')},
           'providerMessageId', NULL, 'errorCode', ${discardCode}::text,
           'occurredAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
  return p.compile(
    'discard_batch',
    `WITH picked AS (
       SELECT ${selectColumns(n, [
         'id',
         'status',
         'attempts',
         'nextAttemptAt',
         'scheduledAt',
         'lastErrorCode',
         'lastErrorMessage',
       ])}
         FROM ${n.table}
        WHERE ${discardFilterSql(n, p)}
        ORDER BY ${n.column('updatedAt')}, ${n.column('id')}
        LIMIT ${p.ref('batchSize')}
          FOR UPDATE SKIP LOCKED
     ),
     audit AS (
       INSERT INTO ${r.table}
              (${r.column('actionId')}, ${r.column('notificationId')}, ${r.column('previousStatus')},
               ${r.column('previousAttempts')}, ${r.column('previousNextAttemptAt')},
               ${r.column('previousScheduledAt')}, ${r.column('previousErrorCode')},
               ${r.column('previousErrorMessage')})
       SELECT ${actionId}::uuid, picked."id", picked."status", picked."attempts", picked."nextAttemptAt",
              picked."scheduledAt", picked."lastErrorCode", picked."lastErrorMessage"
         FROM picked
     ),
     d AS (
       UPDATE ${n.table} AS n
          SET ${n.column('status')} = 'Failed',
              ${n.column('nextAttemptAt')} = NULL,
              ${n.column('lastErrorCode')} = ${discardCode}::text,
              ${n.column('lastErrorMessage')} = ${p.ref('discardMessage')}::text,
              ${n.column('claimToken')} = NULL,
              ${n.column('claimExpiresAt')} = NULL,
              ${n.column('eventSequence')} = n.${n.column('eventSequence')} + 1,
              ${n.column('updatedAt')} = now()
         FROM picked
        WHERE n.${n.column('id')} = picked."id"
       RETURNING ${selectColumns(n, ['id', 'tenantId', 'channel', 'attempts', 'eventSequence'], 'n.')}
     ),
     appended AS (
       INSERT INTO ${o.table} (${o.column('id')}, ${o.column('topic')}, ${o.column('messageKey')},
                               ${o.column('contractVersion')}, ${o.column('payload')}, ${o.column('headers')})
       SELECT gen_random_uuid(), ${p.ref('eventTopic')}::text, d."id"::text, ${p.ref('eventContractVersion')}::int,
              ${withEventSequence(payload, 'd."eventSequence"')},
              jsonb_build_object('correlationId', ${actionId}::text, 'jobRunId', ${actionId}::text)
         FROM d LEFT JOIN ${c.table} AS c ON c.${c.column('key')} = d."channel"
     )
     SELECT d."id" FROM d`,
  );
}
