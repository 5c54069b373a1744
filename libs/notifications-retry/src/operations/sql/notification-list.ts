import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../../persistence/notification.entity';
import { entitySql, type EntitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { afterPositionSql, keysetTimeSql } from './keyset';

export type NotificationListValue =
  'channel' | 'errorCode' | 'since' | 'id' | 'afterAt' | 'afterId' | 'limit';

/** How one state's list finds and orders its rows. */
export interface NotificationListShape {
  /** The state's condition on `notifications` (no parameters). */
  readonly where: (n: EntitySql<NotificationEntity>) => string;
  /** The keyset's time column, then `id`; the order of both. */
  readonly orderBy: 'dueAt' | 'updatedAt';
  readonly order: 'asc' | 'desc';
}

/**
 * The list statement every state shares, but for its condition and order:
 * one page of `limit` rows after the cursor's `(afterAt, afterId)` (null =
 * the first page), of the channel, error code, updated-since time and id asked
 * for (null = any). Returns the summary columns, the sort key as text
 * (`keyAt`, `keyId`) and the address, subject and body for masking and for
 * redacting the stored code only: the caller never shows them.
 */
export function compileNotificationList(
  dataSource: DataSource,
  purpose: string,
  shape: NotificationListShape,
): BoundStatement<NotificationListValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<NotificationListValue>();
  const key = n.column(shape.orderBy);
  const id = n.column('id');
  const direction = shape.order === 'asc' ? 'ASC' : 'DESC';
  const channel = p.ref('channel');
  const errorCode = p.ref('errorCode');
  const since = p.ref('since');
  const byId = p.ref('id');
  const after = afterPositionSql(
    { column: key, value: p.ref('afterAt') },
    { column: id, value: p.ref('afterId') },
    shape.order,
  );
  const columns = selectColumns(n, [
    'id',
    'channel',
    'status',
    'recipientAddress',
    'subject',
    'body',
    'attempts',
    'lastErrorCode',
    'dueAt',
    'updatedAt',
  ]);
  return p.compile(
    purpose,
    `SELECT ${columns}, ${claimedUntil(n)} AS "claimedUntil",
            ${keysetTimeSql(key)} AS "keyAt", ${id}::text AS "keyId"
       FROM ${n.table}
      WHERE ${shape.where(n)}
        AND (${channel}::text IS NULL OR ${n.column('channel')} = ${channel})
        AND (${errorCode}::text IS NULL OR ${n.column('lastErrorCode')} = ${errorCode})
        AND (${since}::timestamptz IS NULL OR ${n.column('updatedAt')} >= ${since})
        AND (${byId}::uuid IS NULL OR ${id} = ${byId})
        AND ${after}
      ORDER BY ${key} ${direction}, ${id} ${direction}
      LIMIT ${p.ref('limit')}`,
  );
}

/** A live claim's expiry, else null: by the database clock, not the caller's. */
export function claimedUntil(n: EntitySql<NotificationEntity>): string {
  return `CASE WHEN ${liveClaim(n)} THEN ${n.column('claimExpiresAt')} END`;
}

/** A live claim, by the database clock: a worker holds the row. */
export function liveClaim(n: EntitySql<NotificationEntity>): string {
  return `(${n.column('claimToken')} IS NOT NULL AND ${n.column('claimExpiresAt')} > now())`;
}
