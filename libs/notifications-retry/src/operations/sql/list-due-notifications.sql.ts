import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import { compileNotificationList, type NotificationListValue } from './notification-list';

/**
 * Due rows, next to be claimed first: `due_at` reached. A live claim keeps
 * `due_at` ahead of now (it is the greatest of the two), so no claimed row is
 * among them. Walks notifications_due_idx.
 */
export function compileListDueNotifications(
  dataSource: DataSource,
): BoundStatement<NotificationListValue> {
  return compileNotificationList(dataSource, 'list_due_notifications', {
    where: (n) => `${n.column('dueAt')} IS NOT NULL AND ${n.column('dueAt')} <= now()`,
    orderBy: 'dueAt',
    order: 'asc',
  });
}
