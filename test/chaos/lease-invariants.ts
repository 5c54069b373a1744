import type { Client } from 'pg';
import { invariantResult, type InvariantResult } from './invariant-result';

/**
 * The lease: every row write made by the owner of a live lease (but the
 * late-success writes, which no lease fences by design), the lease
 * history (a new owner only after the previous lease expired, tokens counting
 * up by one), and no write under a fencing token after a higher one wrote.
 */
export async function checkLeaseOwnership(
  client: Client,
): Promise<{ result: InvariantResult; leases: number; auditedWrites: number }> {
  const failures: string[] = [];
  // Each row write: the writer's session is the lease owner of record at that moment (the row's
  // transaction holds FOR SHARE on the lease row, so no takeover can commit in between), and the
  // lease had not expired by the database clock at the moment of the write.
  const { rows: writes } = await client.query<{ id: string; problem: string }>(
    `SELECT notification_id::text AS id,
            CASE WHEN lock_owner IS NULL THEN 'written by ' || app_name || ' with no lease row'
                 WHEN lock_owner <> app_name THEN 'written by ' || app_name || ' while ' || lock_owner || ' (token ' || lock_token || ') held the lease'
                 ELSE 'written by ' || app_name || ' ' || round(extract(epoch FROM at - lock_expires_at) * 1000) || ' ms after its lease (token ' || lock_token || ') expired' END AS problem
       FROM chaos_audit
      WHERE NOT late_success
        AND (lock_owner IS NULL OR lock_owner <> app_name OR lock_expires_at <= at)
      ORDER BY id`,
  );
  failures.push(...writes.map((w) => `${w.id}: ${w.problem}`));

  const { rows: history } = await client.query<{ id: string; problem: string }>(
    `SELECT id::text,
            CASE WHEN op <> 'UPDATE' AND op <> 'INSERT' THEN 'lease row ' || op
                 WHEN op = 'UPDATE' AND new_token = old_token AND new_owner <> old_owner THEN 'owner changed without a new token'
                 WHEN op = 'UPDATE' AND new_token <> old_token + 1 AND new_token <> old_token THEN 'token ' || old_token || ' → ' || new_token
                 ELSE 'token ' || new_token || ' acquired ' || round(extract(epoch FROM old_expires_at - new_acquired_at) * 1000) || ' ms before token ' || old_token || ' expired' END AS problem
       FROM chaos_lock_audit
      WHERE op = 'DELETE'
         OR (op = 'UPDATE' AND ((new_token = old_token AND new_owner <> old_owner)
              OR (new_token <> old_token AND (new_token <> old_token + 1 OR new_acquired_at < old_expires_at))))
      ORDER BY id`,
  );
  failures.push(...history.map((h) => `lease change ${h.id}: ${h.problem}`));

  const { rows: counts } = await client.query<{ writes: number; late: number; tokens: number }>(
    `SELECT (SELECT count(*)::int FROM chaos_audit) AS writes,
            (SELECT count(*)::int FROM chaos_audit WHERE late_success) AS late,
            (SELECT count(DISTINCT new_token)::int FROM chaos_lock_audit) AS tokens`,
  );
  return {
    result: invariantResult(
      'every row write (but a late success) by the owner of a live lease; leases never overlap',
      failures,
      `${counts[0].writes} row writes, each by the owner of a live lease but ${counts[0].late} late successes (not fenced by design: record-late-success.sql.ts); ${counts[0].tokens} leases (fencing tokens), each taken after the previous one expired`,
    ),
    leases: counts[0].tokens,
    auditedWrites: counts[0].writes,
  };
}

/**
 * Fencing: in the order the writes ran (the audit's sequence), no row is
 * written under a fencing token lower than one that has already written. The
 * audit records the lease row as the writer's transaction saw it.
 */
export async function checkFencingOrder(client: Client): Promise<InvariantResult> {
  const { rows } = await client.query<{
    id: string;
    seq: string;
    writer: string;
    token: string;
    higher: string;
    higher_seq: string;
  }>(
    `WITH ordered AS (
       SELECT id, notification_id, app_name, lock_token,
              max(lock_token) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS higher
         FROM chaos_audit WHERE lock_token IS NOT NULL AND NOT late_success)
     SELECT o.notification_id::text AS id, o.id::text AS seq, o.app_name AS writer,
            o.lock_token::text AS token, o.higher::text AS higher,
            (SELECT min(a.id) FROM chaos_audit a WHERE a.lock_token = o.higher)::text AS higher_seq
       FROM ordered o WHERE o.lock_token < o.higher ORDER BY o.id`,
  );
  const { rows: counts } = await client.query<{ writes: number; tokens: number }>(
    `SELECT count(*)::int AS writes, count(DISTINCT lock_token)::int AS tokens
       FROM chaos_audit WHERE lock_token IS NOT NULL AND NOT late_success`,
  );
  return invariantResult(
    'no write under a fencing token after a higher token wrote',
    rows.map(
      (r) =>
        `${r.id}: written by ${r.writer} under token ${r.token} (audit #${r.seq}) after token ${r.higher} had written (audit #${r.higher_seq})`,
    ),
    `${counts[0].writes} row writes under ${counts[0].tokens} fencing tokens, in token order`,
  );
}
