import type { NotificationEntity } from '../../persistence/notification.entity';
import type { EntitySql } from '../../persistence/sql/entity-sql';
import type { StatementParameters } from '../../persistence/sql/sql-statement';
import { liveClaim } from './notification-list';

export type DiscardFilterValue = 'ids' | 'channel' | 'errorCode' | 'since' | 'state';

/**
 * The rows a discard takes: rows this worker would still send (Pending with a
 * send time, Failed with a next attempt; a Pending row without scheduled_at is
 * the dispatcher's), no live claim, of the filter's ids, channel, error code,
 * updated-since time and state (`due`, `deferred`, `retrying`; null = any).
 * Never a Sent or terminal row.
 */
export function discardFilterSql<Name extends string>(
  n: EntitySql<NotificationEntity>,
  /** A statement's parameters that name the filter's values. */
  p: DiscardFilterValue extends Name ? StatementParameters<Name> : never,
): string {
  const ids = p.ref('ids' as Name);
  const channel = p.ref('channel' as Name);
  const errorCode = p.ref('errorCode' as Name);
  const since = p.ref('since' as Name);
  const state = p.ref('state' as Name);
  const status = n.column('status');
  return [
    `((${status} = 'Pending' AND ${n.column('scheduledAt')} IS NOT NULL)
       OR (${status} = 'Failed' AND ${n.column('nextAttemptAt')} IS NOT NULL))`,
    `NOT ${liveClaim(n)}`,
    `(${ids}::uuid[] IS NULL OR ${n.column('id')} = ANY(${ids}::uuid[]))`,
    `(${channel}::text IS NULL OR ${n.column('channel')} = ${channel})`,
    `(${errorCode}::text IS NULL OR ${n.column('lastErrorCode')} = ${errorCode})`,
    `(${since}::timestamptz IS NULL OR ${n.column('updatedAt')} >= ${since})`,
    `(${state}::text IS NULL
       OR (${state} = 'due' AND ${n.column('dueAt')} <= now())
       OR (${state} = 'deferred' AND ${status} = 'Pending' AND ${n.column('scheduledAt')} > now())
       OR (${state} = 'retrying' AND ${status} = 'Failed' AND ${n.column('nextAttemptAt')} > now()))`,
  ].join('\n        AND ');
}
