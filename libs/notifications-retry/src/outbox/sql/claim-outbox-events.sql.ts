import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { EVENT_SEQUENCE_FIELD } from '../../persistence/sql/event-sequence.sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ClaimOutboxEventsValue = 'limit' | 'claimToken' | 'claimTtlMs';

/**
 * Claims up to `limit` events, oldest first, stamping `claimToken` on them
 * for `claimTtlMs`. Only the oldest unpublished, unparked event of each
 * message key can be claimed, so a key never has two events in flight and its
 * events go out in `created_at` order; a key whose head is backing off waits,
 * the others do not. SKIP LOCKED lets several relays claim side by side;
 * PostgreSQL re-checks the claim condition on a row another relay changed
 * meanwhile. Returns the events with `payload` as text and `sequence`, the
 * payload's sequence as text when it is a JSON number, else null.
 */
export function compileClaimOutboxEvents(
  dataSource: DataSource,
): BoundStatement<ClaimOutboxEventsValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<ClaimOutboxEventsValue>();
  const payload = `o.${o.column('payload')}`;
  const unpublishedHead = (alias: string): string =>
    `${alias}.${o.column('publishedAt')} IS NULL AND ${alias}.${o.column('parkedAt')} IS NULL`;
  return p.compile(
    'claim_outbox_events',
    `WITH candidates AS (
       SELECT o.${o.column('id')} AS id
         FROM ${o.table} o
        WHERE ${unpublishedHead('o')}
          AND (o.${o.column('nextAttemptAt')} IS NULL OR o.${o.column('nextAttemptAt')} <= now())
          AND (o.${o.column('claimExpiresAt')} IS NULL OR o.${o.column('claimExpiresAt')} <= now())
          AND NOT EXISTS (
                SELECT 1 FROM ${o.table} older
                 WHERE older.${o.column('messageKey')} = o.${o.column('messageKey')}
                   AND ${unpublishedHead('older')}
                   AND (older.${o.column('createdAt')}, older.${o.column('id')})
                       < (o.${o.column('createdAt')}, o.${o.column('id')}))
        ORDER BY o.${o.column('createdAt')}, o.${o.column('id')}
        LIMIT ${p.ref('limit')}
          FOR UPDATE SKIP LOCKED)
     UPDATE ${o.table} o
        SET ${o.column('claimToken')} = ${p.ref('claimToken')},
            ${o.column('claimExpiresAt')} = now() + ${p.ref('claimTtlMs')} * interval '1 millisecond',
            ${o.column('attempts')} = o.${o.column('attempts')} + 1
       FROM candidates c
      WHERE o.${o.column('id')} = c.id
     RETURNING ${selectColumns(o, ['id', 'topic', 'messageKey', 'contractVersion'], 'o.')},
               ${payload}::text AS "payload",
               CASE WHEN jsonb_typeof(${payload} -> '${EVENT_SEQUENCE_FIELD}') = 'number'
                    THEN ${payload} ->> '${EVENT_SEQUENCE_FIELD}' END AS "sequence",
               ${selectColumns(o, ['headers', 'createdAt', 'attempts'], 'o.')}`,
  );
}
