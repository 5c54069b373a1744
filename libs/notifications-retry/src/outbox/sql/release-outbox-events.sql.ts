import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ReleaseOutboxEventsValue = 'ids' | 'claimToken';

/** Cut by shutdown: the events (`ids`) still claimed by `claimToken` released at once for another relay, with no backoff. */
export function compileReleaseOutboxEvents(
  dataSource: DataSource,
): BoundStatement<ReleaseOutboxEventsValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<ReleaseOutboxEventsValue>();
  return p.compile(
    'release_outbox_events',
    `UPDATE ${o.table} SET ${o.column('claimToken')} = NULL, ${o.column('claimExpiresAt')} = NULL
      WHERE ${o.column('id')} = ANY(${p.ref('ids')}::uuid[]) AND ${o.column('claimToken')} = ${p.ref('claimToken')}`,
  );
}
