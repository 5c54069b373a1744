/**
 * An operator's release of a lease, audited in the same statement: only at the
 * given fencing token (a takeover since the operator looked changes it), and
 * only when the lease has expired or its owner is the one named. Expired, not
 * deleted: the row keeps the fencing token counting up for the next owner.
 * $1 key, $2 fencing token, $3 owner named (null: none), $4 actor, $5 reason.
 */
export const RELEASE_LEASE_SQL = `
  WITH released AS (
    UPDATE distributed_locks
       SET expires_at = least(expires_at, now())
     WHERE key = $1
       AND fencing_token = $2::bigint
       AND (expires_at <= now() OR owner = $3::text)
    RETURNING key, owner, fencing_token
  ),
  audit AS (
    INSERT INTO notification_operator_actions (action, actor, reason, filter, rows)
    SELECT 'lease-release', $4::text, $5::text,
           jsonb_build_object('key', key, 'owner', owner, 'fencingToken', fencing_token), 1
      FROM released
  )
  SELECT key, owner, fencing_token FROM released`;
