import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ParkOutboxEventsValue = 'ids' | 'errors' | 'claimToken';

/**
 * Permanent failures (`ids` uuid[], `errors` text[]), still claimed by
 * `claimToken`: parked with their reason; their keys' later events go on.
 * Its row count is how many were.
 */
export function compileParkOutboxEvents(
  dataSource: DataSource,
): BoundStatement<ParkOutboxEventsValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<ParkOutboxEventsValue>();
  return p.compile(
    'park_outbox_events',
    `UPDATE ${o.table} o
        SET ${o.column('claimToken')} = NULL, ${o.column('claimExpiresAt')} = NULL,
            ${o.column('parkedAt')} = now(), ${o.column('lastError')} = f.error
       FROM unnest(${p.ref('ids')}::uuid[], ${p.ref('errors')}::text[]) AS f(id, error)
      WHERE o.${o.column('id')} = f.id AND o.${o.column('claimToken')} = ${p.ref('claimToken')}`,
  );
}
