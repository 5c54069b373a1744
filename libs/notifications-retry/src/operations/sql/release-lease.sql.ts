import type { DataSource } from 'typeorm';
import { DistributedLockEntity } from '../../persistence/distributed-lock.entity';
import { NotificationOperatorActionEntity } from '../../persistence/notification-operator-action.entity';
import { entitySql } from '../../persistence/sql/entity-sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';

export type ReleaseLeaseValue = 'key' | 'fencingToken' | 'owner' | 'actor' | 'reason';

/**
 * An operator's release of a lease, audited in the same statement: only at the
 * given fencing token (a takeover since the operator looked changes it), and
 * only when the lease has expired or its owner is the one named. Expired, not
 * deleted: the row keeps the fencing token counting up for the next owner.
 * `key`, `fencingToken`, `owner` named (null: none), `actor`, `reason`.
 */
export function compileReleaseLease(dataSource: DataSource): BoundStatement<ReleaseLeaseValue> {
  const l = entitySql(dataSource, DistributedLockEntity);
  const a = entitySql(dataSource, NotificationOperatorActionEntity);
  const p = new StatementParameters<ReleaseLeaseValue>();
  const expiresAt = l.column('expiresAt');
  return p.compile(
    'operator_release_lease',
    `WITH released AS (
       UPDATE ${l.table}
          SET ${expiresAt} = least(${expiresAt}, now())
        WHERE ${l.column('key')} = ${p.ref('key')}
          AND ${l.column('fencingToken')} = ${p.ref('fencingToken')}::bigint
          AND (${expiresAt} <= now() OR ${l.column('owner')} = ${p.ref('owner')}::text)
       RETURNING ${selectColumns(l, ['key', 'owner', 'fencingToken'])}
     ),
     audit AS (
       INSERT INTO ${a.table} (${a.column('action')}, ${a.column('actor')}, ${a.column('reason')},
                               ${a.column('filter')}, ${a.column('rows')})
       SELECT 'lease-release', ${p.ref('actor')}::text, ${p.ref('reason')}::text,
              jsonb_build_object('key', released."key", 'owner', released."owner",
                                 'fencingToken', released."fencingToken"), 1
         FROM released
     )
     SELECT "key", "owner", "fencingToken" FROM released`,
  );
}
