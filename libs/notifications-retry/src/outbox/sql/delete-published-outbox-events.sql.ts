import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type DeletePublishedOutboxEventsValue = 'retentionMs' | 'limit';

/**
 * Deletes up to `limit` published rows older than `retentionMs`, oldest
 * first. Parked and unpublished rows have no `published_at` and are never
 * candidates. SKIP LOCKED: instances running retention together split the
 * work. Its row count is how many were deleted.
 */
export function compileDeletePublishedOutboxEvents(
  dataSource: DataSource,
): BoundStatement<DeletePublishedOutboxEventsValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<DeletePublishedOutboxEventsValue>();
  const publishedAt = o.column('publishedAt');
  return p.compile(
    'delete_published_outbox_events',
    `DELETE FROM ${o.table}
      WHERE ${o.column('id')} IN (SELECT ${o.column('id')} FROM ${o.table}
                    WHERE ${publishedAt} < now() - ${p.ref('retentionMs')} * interval '1 millisecond'
                    ORDER BY ${publishedAt}
                    LIMIT ${p.ref('limit')}
                      FOR UPDATE SKIP LOCKED)`,
  );
}
