import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type BackOffOutboxEventsValue = 'ids' | 'errors' | 'baseMs' | 'maxMs' | 'claimToken';

/**
 * Retriable failures (`ids` uuid[], `errors` text[], index i of each is
 * event i), still claimed by `claimToken`: released and held back by
 * `baseMs` × 2^(attempts − 1), ±20 % jitter, at most `maxMs` (computed by
 * the database, on its clock). Its row count is how many were.
 */
export function compileBackOffOutboxEvents(
  dataSource: DataSource,
): BoundStatement<BackOffOutboxEventsValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<BackOffOutboxEventsValue>();
  const ids = p.ref('ids');
  const errors = p.ref('errors');
  return p.compile(
    'back_off_outbox_events',
    `UPDATE ${o.table} o
        SET ${o.column('claimToken')} = NULL, ${o.column('claimExpiresAt')} = NULL,
            ${o.column('lastError')} = f.error,
            ${o.column('nextAttemptAt')} = now() + least(${p.ref('maxMs')}::float8,
              ${p.ref('baseMs')}::float8 * power(2, least(greatest(o.${o.column('attempts')} - 1, 0), 30))
            ) * (0.8 + random() * 0.4) * interval '1 millisecond'
       FROM unnest(${ids}::uuid[], ${errors}::text[]) AS f(id, error)
      WHERE o.${o.column('id')} = f.id AND o.${o.column('claimToken')} = ${p.ref('claimToken')}`,
  );
}
