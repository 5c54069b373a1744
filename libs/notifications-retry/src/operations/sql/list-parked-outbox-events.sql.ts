import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import { compileOutboxEventList, type ListOutboxEventsValue } from './list-outbox-events';

/** Events parked after a permanent failure, oldest parked first: notification_outbox_parked_idx. */
export function compileListParkedOutboxEvents(
  dataSource: DataSource,
): BoundStatement<ListOutboxEventsValue> {
  return compileOutboxEventList(dataSource, 'list_parked_outbox_events', {
    where: (o) => `${o.column('parkedAt')} IS NOT NULL AND ${o.column('publishedAt')} IS NULL`,
    orderBy: 'parkedAt',
  });
}
