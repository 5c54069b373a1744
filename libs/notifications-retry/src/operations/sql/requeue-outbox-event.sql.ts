import type { DataSource } from 'typeorm';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type RequeueOutboxEventValue = 'eventId' | 'actor' | 'reason';

/**
 * A parked, unpublished event back to the relay, due now (no backoff, no
 * claim), and its audit row (`outbox-requeue`), in one statement: no audit
 * without the change, no change without the audit. Returns `actionId` when the
 * event was parked, no row otherwise (unknown, unpublished or published).
 */
export function compileRequeueOutboxEvent(
  dataSource: DataSource,
): BoundStatement<RequeueOutboxEventValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<RequeueOutboxEventValue>();
  const eventId = p.ref('eventId');
  return p.compile(
    'requeue_outbox_event',
    `WITH requeued AS (
       UPDATE ${o.table}
          SET ${o.column('parkedAt')} = NULL,
              ${o.column('nextAttemptAt')} = NULL,
              ${o.column('claimToken')} = NULL,
              ${o.column('claimExpiresAt')} = NULL
        WHERE ${o.column('id')} = ${eventId}::uuid
          AND ${o.column('parkedAt')} IS NOT NULL
          AND ${o.column('publishedAt')} IS NULL
       RETURNING ${o.column('id')} AS id
     )
     INSERT INTO ${a.table} (${a.column('action')}, ${a.column('actor')}, ${a.column('reason')},
                             ${a.column('filter')}, ${a.column('rows')})
     SELECT 'outbox-requeue', ${p.ref('actor')}::text, ${p.ref('reason')}::text,
            jsonb_build_object('eventId', requeued.id), 1
       FROM requeued
     RETURNING ${a.column('id')} AS "actionId"`,
  );
}
