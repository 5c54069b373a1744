import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { claimedUntil } from './notification-list';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ReadNotificationDetailValue = 'id';

/**
 * One notification by `id`, every column the detail page shows, and the
 * address, subject and body for masking and redaction only: the caller never
 * shows them. `attemptHistory` as jsonb (parsed by the driver).
 */
export function compileReadNotificationDetail(
  dataSource: DataSource,
): BoundStatement<ReadNotificationDetailValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<ReadNotificationDetailValue>();
  const columns = selectColumns(n, [
    'id',
    'tenantId',
    'channel',
    'status',
    'recipientAddress',
    'subject',
    'body',
    'attempts',
    'lastErrorCode',
    'lastErrorMessage',
    'dueAt',
    'updatedAt',
    'createdAt',
    'sentAt',
    'scheduledAt',
    'nextAttemptAt',
    'providerMessageId',
    'eventSequence',
    'attemptHistory',
  ]);
  return p.compile(
    'read_notification_detail',
    `SELECT ${columns}, ${claimedUntil(n)} AS "claimedUntil" FROM ${n.table} WHERE ${n.column('id')} = ${p.ref('id')}::uuid`,
  );
}
