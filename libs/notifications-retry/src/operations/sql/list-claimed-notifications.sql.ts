import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import {
  compileNotificationList,
  liveClaim,
  type NotificationListValue,
} from './notification-list';

/**
 * Rows a worker holds right now (a live claim), the claim that lapses first
 * first: a claimed row's `due_at` is its claim's expiry.
 */
export function compileListClaimedNotifications(
  dataSource: DataSource,
): BoundStatement<NotificationListValue> {
  return compileNotificationList(dataSource, 'list_claimed_notifications', {
    where: (n) => `${n.column('dueAt')} IS NOT NULL AND ${liveClaim(n)}`,
    orderBy: 'dueAt',
    order: 'asc',
  });
}
