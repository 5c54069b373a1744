import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type MarkOutboxPublishedValue = 'ids' | 'claimToken';

/** Sets `published_at` on the events (`ids`, uuid[]) still claimed by `claimToken`; its row count is how many were. */
export function compileMarkOutboxPublished(
  dataSource: DataSource,
): BoundStatement<MarkOutboxPublishedValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<MarkOutboxPublishedValue>();
  return p.compile(
    'mark_outbox_published',
    `UPDATE ${o.table}
        SET ${o.column('publishedAt')} = now(), ${o.column('claimToken')} = NULL,
            ${o.column('claimExpiresAt')} = NULL, ${o.column('nextAttemptAt')} = NULL,
            ${o.column('lastError')} = NULL
      WHERE ${o.column('id')} = ANY(${p.ref('ids')}::uuid[]) AND ${o.column('claimToken')} = ${p.ref('claimToken')}`,
  );
}
