import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import {
  compileNotificationList,
  liveClaim,
  type NotificationListValue,
} from './notification-list';

/** Pending rows deferred to a later send time (quiet hours), soonest first. */
export function compileListDeferredNotifications(
  dataSource: DataSource,
): BoundStatement<NotificationListValue> {
  return compileNotificationList(dataSource, 'list_deferred_notifications', {
    where: (n) =>
      `${n.column('dueAt')} IS NOT NULL AND ${n.column('status')} = 'Pending'
        AND ${n.column('scheduledAt')} > now() AND NOT ${liveClaim(n)}`,
    orderBy: 'dueAt',
    order: 'asc',
  });
}
