import type { DataSource } from 'typeorm';
import { NotificationEntity } from '../notification.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type ReleaseClaimsValue = 'ids' | 'claimTokens';

/**
 * Hands claimed rows back untouched (status, attempts and due time as they
 * were), matched on their tokens: rows claimed but never called when a cycle
 * stops, and calls cut at shutdown. Another instance takes them at once
 * instead of waiting for the claim to lapse. Not fenced: it only ever removes
 * this worker's own claims, and must work after the lease is gone.
 */
export function compileReleaseClaims(dataSource: DataSource): BoundStatement<ReleaseClaimsValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const p = new StatementParameters<ReleaseClaimsValue>();
  return p.compile(
    'release_claims',
    `UPDATE ${n.table} AS n
        SET ${n.column('claimToken')} = NULL, ${n.column('claimExpiresAt')} = NULL
       FROM unnest(${p.ref('ids')}::uuid[], ${p.ref('claimTokens')}::uuid[]) AS r(id, claim_token)
      WHERE n.${n.column('id')} = r.id AND n.${n.column('claimToken')} = r.claim_token
     RETURNING n.${n.column('id')} AS id`,
  );
}
