import type { DataSource } from 'typeorm';
import type { BoundStatement } from '../../persistence/sql/sql-statement';
import { compileNotificationList, type NotificationListValue } from './notification-list';

/** Terminal Failed rows (no next attempt), the latest failure first. */
export function compileListTerminalNotifications(
  dataSource: DataSource,
): BoundStatement<NotificationListValue> {
  return compileNotificationList(dataSource, 'list_terminal_notifications', {
    where: (n) => `${n.column('status')} = 'Failed' AND ${n.column('nextAttemptAt')} IS NULL`,
    orderBy: 'updatedAt',
    order: 'desc',
  });
}
