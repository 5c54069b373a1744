import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

/**
 * Unpublished (not parked) and parked events, and the age of the oldest
 * unpublished one by the database clock (null when none). Reads only the
 * unpublished rows (notification_outbox_unpublished_idx), never the
 * published ones retention has not deleted yet.
 */
export function compileOutboxStateCounts(dataSource: DataSource): BoundStatement<never> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<never>();
  const parked = o.column('parkedAt');
  return p.compile(
    'outbox_state_counts',
    `SELECT count(*) FILTER (WHERE ${parked} IS NULL)::int AS "unpublished",
            count(*) FILTER (WHERE ${parked} IS NOT NULL)::int AS "parked",
            (extract(epoch FROM now() - min(${o.column('createdAt')}) FILTER (WHERE ${parked} IS NULL)) * 1000)::bigint::text
              AS "oldestUnpublishedAgeMs"
       FROM ${o.table}
      WHERE ${o.column('publishedAt')} IS NULL`,
  );
}
