import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import { compileOutboxEventList, type ListOutboxEventsValue } from './list-outbox-events';

/** Events the relay still has to publish (not parked), in the relay's order: notification_outbox_unpublished_idx. */
export function compileListUnpublishedOutboxEvents(
  dataSource: DataSource,
): BoundStatement<ListOutboxEventsValue> {
  return compileOutboxEventList(dataSource, 'list_unpublished_outbox_events', {
    where: (o) => `${o.column('publishedAt')} IS NULL AND ${o.column('parkedAt')} IS NULL`,
    orderBy: 'createdAt',
  });
}
