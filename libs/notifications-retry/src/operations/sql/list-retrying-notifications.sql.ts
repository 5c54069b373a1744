import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import {
  compileNotificationList,
  liveClaim,
  type NotificationListValue,
} from './notification-list';

/** Failed rows waiting for their next attempt, the soonest first. */
export function compileListRetryingNotifications(
  dataSource: DataSource,
): BoundStatement<NotificationListValue> {
  return compileNotificationList(dataSource, 'list_retrying_notifications', {
    where: (n) =>
      `${n.column('dueAt')} IS NOT NULL AND ${n.column('status')} = 'Failed'
        AND ${n.column('nextAttemptAt')} > now() AND NOT ${liveClaim(n)}`,
    orderBy: 'dueAt',
    order: 'asc',
  });
}
