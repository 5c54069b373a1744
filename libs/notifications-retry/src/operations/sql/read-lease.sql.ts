/** A lease with the database's view of it. $1 lease key. */
export const READ_LEASE_SQL = `
  SELECT key, owner, fencing_token, acquired_at, expires_at, now() AS db_now,
         expires_at > now() AS live
    FROM distributed_locks
   WHERE key = $1`;
