import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

/**
 * One row: `unpublished` (not parked), the age in seconds of the oldest of
 * them by the database clock (`oldest`, 0 when there is none) and `parked`.
 * No parameters.
 */
export function compileOutboxBacklog(dataSource: DataSource): BoundStatement<never> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<never>();
  const publishedAt = o.column('publishedAt');
  const parkedAt = o.column('parkedAt');
  return p.compile(
    'outbox_backlog',
    `SELECT (SELECT count(*) FROM ${o.table}
              WHERE ${publishedAt} IS NULL AND ${parkedAt} IS NULL)::int AS "unpublished",
            coalesce(extract(epoch FROM now() - (
              SELECT min(${o.column('createdAt')}) FROM ${o.table}
               WHERE ${publishedAt} IS NULL AND ${parkedAt} IS NULL)), 0)::float8 AS "oldest",
            (SELECT count(*) FROM ${o.table}
              WHERE ${parkedAt} IS NOT NULL AND ${publishedAt} IS NULL)::int AS "parked"`,
  );
}
