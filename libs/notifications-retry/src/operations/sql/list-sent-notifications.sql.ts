import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import { compileNotificationList, type NotificationListValue } from './notification-list';

/** Sent rows, the latest first. */
export function compileListSentNotifications(
  dataSource: DataSource,
): BoundStatement<NotificationListValue> {
  return compileNotificationList(dataSource, 'list_sent_notifications', {
    where: (n) => `${n.column('status')} = 'Sent'`,
    orderBy: 'updatedAt',
    order: 'desc',
  });
}
