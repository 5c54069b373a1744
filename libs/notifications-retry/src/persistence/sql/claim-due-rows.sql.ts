import type { DataSource } from 'typeorm';
import type { LeaseFence } from '../../vocabulary/lease-fence';
import { NotificationEntity } from '../notification.entity';
import { entitySql } from './entity-sql';
import { embedFence, type FenceValue } from './lease-fence-parameters';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type ClaimDueRowsValue =
  | FenceValue
  /** text[]: the channels to claim from; int[] their quotas; int[] each one's claim length in ms. */
  | 'channels'
  | 'quotas'
  | 'claimMs'
  /** The due threshold: the cycle's now. */
  | 'now'
  /** Rows in all. */
  | 'limit'
  /** uuid[]: rows to leave alone (a call of this instance for them still runs). */
  | 'excluded'
  /** uuid: stamped on every row claimed. */
  | 'claimToken';

/**
 * The claim (DESIGN §3.3), one statement:
 *
 * 1. the lease fence (the lock's own SELECT, which share-locks the lease row
 *    so a takeover waits for this statement);
 * 2. the channels whose claim the lease outlives (claim time + timeout +
 *    settle margin ≤ the lease's expiry, both by the database clock);
 * 3. per channel, one range scan of `notifications_due_idx`, oldest due
 *    first (due by the cycle's `now`; a claim still live by the database's
 *    statement time is never due, whatever `now` says), up to its quota, locking with `FOR UPDATE SKIP LOCKED`
 *    (TypeORM's `pessimistic_write` + `skip_locked`), merged by due time up
 *    to the limit. Rows of channels not listed are never read;
 * 4. the claim stamped: token and expiry. Status and attempts are untouched,
 *    and `due_at` (generated) moves to the expiry: the row leaves the range.
 *    Each row is found again by the tuple id its lock returned (a TID scan,
 *    whatever the planner thinks of the table's size; the row is locked, so
 *    the tuple cannot move), the id checked as well.
 *
 * Always returns one row at least: `leased` says whether the fence held; the
 * claimed rows have `id` set. `due_at` is the row's due time before the claim,
 * `lapsed` whether it carried an earlier claim that ran out.
 */
export function compileClaimDueRows(
  dataSource: DataSource,
  fence: LeaseFence,
): BoundStatement<ClaimDueRowsValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<ClaimDueRowsValue>();
  const fenceSql = embedFence(p, fence);

  const [scanSql, scanParameters] = dataSource
    .getRepository(NotificationEntity)
    .createQueryBuilder('n')
    .select('n.id', 'id')
    .addSelect('n.dueAt', 'due_at')
    .addSelect('n.claimToken IS NOT NULL', 'lapsed')
    .addSelect('n.ctid', 'row_ctid')
    .where('n.channel = ch.key')
    .andWhere('n.dueAt <= :now', { now: 'now' })
    // Whatever `now` a caller brings, a live claim is judged by the database (DESIGN §3.1): a clock
    // ahead of it must not take a row another worker still holds. A filter on the same range scan.
    .andWhere('(n.claimExpiresAt IS NULL OR n.claimExpiresAt <= statement_timestamp())')
    .andWhere('NOT (n.id = ANY(:excluded))', { excluded: 'excluded' })
    .orderBy('n.dueAt', 'ASC')
    .setLock('pessimistic_write')
    .setOnLocked('skip_locked')
    .getQueryAndParameters();
  // The builder takes no expression for LIMIT: the channel's quota goes in before the lock clause.
  const lockClause = ' FOR UPDATE SKIP LOCKED';
  if (!scanSql.endsWith(lockClause)) {
    throw new Error(`unexpected TypeORM claim scan (no trailing${lockClause}): ${scanSql}`);
  }
  const scan = p.adopt(
    `${scanSql.slice(0, -lockClause.length)} LIMIT ch.quota${lockClause}`,
    scanParameters as ClaimDueRowsValue[],
  );

  const returned = (
    [
      'id',
      'tenantId',
      'channel',
      'recipientAddress',
      'subject',
      'body',
      'status',
      'attempts',
      'nextAttemptAt',
      'scheduledAt',
    ] as const
  ).map((property) => `n.${n.column(property)} AS ${dataSource.driver.escape(property)}`);

  return p.compile(
    'claim_due_rows',
    `WITH lease AS (${fenceSql}),
     ch AS (
       SELECT c.key, c.quota, c.claim_ms
         FROM unnest(${p.ref('channels')}::text[], ${p.ref('quotas')}::int[], ${p.ref('claimMs')}::int[])
                AS c(key, quota, claim_ms)
         JOIN lease ON lease.expires_at >= statement_timestamp() + c.claim_ms * interval '1 millisecond'
        WHERE c.quota > 0
     ),
     due AS (
       SELECT d.id, d.row_ctid, d.due_at, d.lapsed, ch.claim_ms
         FROM ch CROSS JOIN LATERAL (${scan}) AS d
        ORDER BY d.due_at
        LIMIT ${p.ref('limit')}
     ),
     claimed AS (
       UPDATE ${n.table} AS n
          SET ${n.column('claimToken')} = ${p.ref('claimToken')}::uuid,
              ${n.column('claimExpiresAt')} = statement_timestamp() + due.claim_ms * interval '1 millisecond'
         FROM due
        WHERE n.ctid = due.row_ctid AND n.${n.column('id')} = due.id
       RETURNING ${returned.join(', ')}, due.due_at AS "dueAt", due.lapsed AS "lapsed"
     )
     SELECT EXISTS (SELECT 1 FROM lease) AS "leased", claimed.*
       FROM (SELECT 1) AS one LEFT JOIN claimed ON true`,
  );
}
