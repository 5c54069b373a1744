import type { NotificationEntity } from '../../persistence/notification.entity';
import type { EntitySql } from '../../persistence/sql/entity-sql';
import type { StatementParameters } from '../../persistence/sql/sql-statement';

/** The filter's values, null meaning any (see `filterValues`). `ids` only where a statement takes them. */
export type TerminalFilterValue = 'channel' | 'errorCode' | 'since';
export type RedriveFilterValue = TerminalFilterValue | 'ids';

/**
 * The WHERE condition the terminal-failure statements share: terminal Failed
 * rows (Failed, no next attempt) of the channel, error code and failed-since
 * time (`updated_at`) asked for, and of the ids with `ids`. `alias` qualifies
 * the columns (a statement that reads `notifications` under one).
 */
export function terminalFilterSql<Name extends string>(
  n: EntitySql<NotificationEntity>,
  /** A statement's parameters that name the filter's values (and `ids` with `options.ids`). */
  p: TerminalFilterValue extends Name ? StatementParameters<Name> : never,
  options: { readonly ids: 'ids' extends Name ? boolean : false },
): string {
  const channel = p.ref('channel' as Name);
  const errorCode = p.ref('errorCode' as Name);
  const since = p.ref('since' as Name);
  const conditions = [
    `${n.column('status')} = 'Failed' AND ${n.column('nextAttemptAt')} IS NULL`,
    `(${channel}::text IS NULL OR ${n.column('channel')} = ${channel})`,
    `(${errorCode}::text IS NULL OR ${n.column('lastErrorCode')} = ${errorCode})`,
    `(${since}::timestamptz IS NULL OR ${n.column('updatedAt')} >= ${since})`,
  ];
  if (options.ids) {
    const ids = p.ref('ids' as Name);
    conditions.push(`(${ids}::uuid[] IS NULL OR ${n.column('id')} = ANY(${ids}))`);
  }
  return conditions.join('\n     AND ');
}

/** A live claim, by the database clock: a worker holds the row. */
export function liveClaimSql(n: EntitySql<NotificationEntity>): string {
  return `${n.column('claimToken')} IS NOT NULL AND ${n.column('claimExpiresAt')} > now()`;
}
