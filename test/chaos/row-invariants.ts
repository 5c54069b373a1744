import type { Client } from 'pg';
import { invariantResult, type InvariantResult } from './invariant-result';

/** The invariants of the rows themselves, their outbox events and their audited history. */

const FINAL_SQL = `(status = 'Sent' OR (status = 'Failed' AND next_attempt_at IS NULL))`;

/** Every row ends Sent or terminal Failed; none is lost. */
export async function checkEveryRowFinal(
  client: Client,
  context: { readonly seededRows: number; readonly timedOut: boolean },
): Promise<InvariantResult> {
  const { rows } = await client.query<{ total: number; open: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE NOT ${FINAL_SQL})::int AS open
       FROM notifications`,
  );
  const failures: string[] = [];
  if (rows[0].total !== context.seededRows)
    failures.push(`${rows[0].total} rows in the table, ${context.seededRows} seeded`);
  if (rows[0].open > 0) failures.push(`${rows[0].open} rows not final`);
  if (context.timedOut) failures.push('the run hit its time cap');
  return invariantResult(
    'every row Sent or terminal Failed',
    failures,
    `${rows[0].total} rows, all final`,
  );
}

/** Exactly one outbox event per row, matching its final state, written by the final transition. */
export async function checkOneEventPerRow(client: Client): Promise<InvariantResult> {
  const { rows } = await client.query<{ id: string; problem: string }>(
    `WITH events AS (
       SELECT message_key, count(*)::int AS n, min(payload->>'status') AS status,
              min((payload->>'attempts')::int) AS attempts,
              bool_and(payload->>'notificationId' = message_key) AS keyed
         FROM notification_outbox GROUP BY message_key)
     SELECT n.id::text AS id,
            CASE WHEN e.n IS NULL THEN 'no event'
                 WHEN e.n > 1 THEN e.n || ' events'
                 WHEN NOT e.keyed THEN 'payload notificationId differs from the key'
                 WHEN e.status IS DISTINCT FROM n.status THEN 'event ' || e.status || ', row ' || n.status
                 ELSE 'event attempts ' || e.attempts || ', row ' || n.attempts END AS problem
       FROM notifications n LEFT JOIN events e ON e.message_key = n.id::text
      WHERE e.n IS DISTINCT FROM 1 OR NOT e.keyed OR e.status IS DISTINCT FROM n.status
         OR e.attempts IS DISTINCT FROM n.attempts
     UNION ALL
     SELECT o.message_key, 'event for an unknown notification'
       FROM notification_outbox o
      WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id::text = o.message_key)`,
  );
  // Same transaction as the final status change: no event from an intermediate write.
  const { rows: txRows } = await client.query<{ message_key: string; problem: string }>(
    `SELECT oa.message_key,
            CASE WHEN a.id IS NULL THEN 'event written outside any audited row write'
                 ELSE 'event written with a non-final ' || a.old_status || '→' || a.new_status || ' write' END AS problem
       FROM chaos_outbox_audit oa
       LEFT JOIN chaos_audit a ON a.txid = oa.txid AND a.notification_id::text = oa.message_key
      WHERE a.id IS NULL
         OR NOT (a.new_status = 'Sent' OR (a.new_status = 'Failed' AND a.new_next_attempt_at IS NULL))`,
  );
  return invariantResult(
    'exactly one outbox event per row, none for intermediate failures',
    [
      ...rows.map((r) => `${r.id}: ${r.problem}`),
      ...txRows.map((r) => `${r.message_key}: ${r.problem}`),
    ],
    'one event per row, each written by the statement of its final transition',
  );
}

/** INV-NTF-5 and "Sent and terminal rows are never touched again", from the audit trigger. */
export async function checkTransitionsAllowed(client: Client): Promise<InvariantResult> {
  const { rows } = await client.query<{ id: string; problem: string }>(
    `SELECT notification_id::text AS id,
            CASE WHEN op <> 'UPDATE' THEN op
                 WHEN old_status = 'Sent' THEN 'Sent row written (→ ' || new_status || ')'
                 WHEN old_status = 'Failed' AND old_next_attempt_at IS NULL THEN 'terminal row written (→ ' || new_status || ')'
                 WHEN new_attempts < old_attempts THEN 'attempts went down'
                 WHEN new_attempts > old_attempts + 1 THEN 'attempts jumped by ' || (new_attempts - old_attempts)
                 WHEN old_status = 'Pending' AND new_status = 'Pending' AND new_attempts <> old_attempts THEN 'Pending kept but an attempt counted'
                 ELSE old_status || '→' || new_status END AS problem
       FROM chaos_audit
      WHERE op <> 'UPDATE'
         OR old_status = 'Sent'
         OR (old_status = 'Failed' AND old_next_attempt_at IS NULL)
         OR new_attempts < old_attempts OR new_attempts > old_attempts + 1
         OR NOT ((old_status, new_status) IN (('Failed','Sent'), ('Failed','Failed'),
                 ('Pending','Sent'), ('Pending','Failed'), ('Pending','Pending')))
         OR (old_status = 'Pending' AND new_status = 'Pending' AND new_attempts <> old_attempts)`,
  );
  const { rows: counts } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chaos_audit`,
  );
  return invariantResult(
    'no status change outside INV-NTF-5; Sent and terminal rows never touched',
    rows.map((r) => `${r.id}: ${r.problem}`),
    `${counts[0].n} audited writes, all allowed`,
  );
}

/**
 * A terminal row carries a non-retriable code of its provider, or has used its
 * channel's max_attempts; `max_attempts_exhausted` (the row was claimed with
 * its attempts already used) counts as the latter.
 */
export async function checkTerminalJustified(
  client: Client,
  context: {
    readonly channels: ReadonlyArray<{ readonly key: string; readonly maxAttempts: number }>;
    readonly nonRetriableCodes: ReadonlySet<string>;
  },
): Promise<InvariantResult> {
  const { rows } = await client.query<{
    id: string;
    channel: string;
    attempts: number;
    code: string | null;
  }>(
    `SELECT id::text AS id, channel, attempts, last_error_code AS code FROM notifications
      WHERE status = 'Failed' AND next_attempt_at IS NULL ORDER BY id`,
  );
  const maxOf = new Map(context.channels.map((c) => [c.key, c.maxAttempts]));
  const failures: string[] = [];
  const reasons = { nonRetriable: 0, attemptsUsed: 0, exhausted: 0 };
  for (const row of rows) {
    const max = maxOf.get(row.channel);
    if (max === undefined) {
      failures.push(`${row.id}: terminal on unknown channel ${row.channel}`);
    } else if (row.code === 'max_attempts_exhausted') {
      if (row.attempts >= max) reasons.exhausted++;
      else
        failures.push(
          `${row.id}: max_attempts_exhausted with ${row.attempts} of ${max} attempts used`,
        );
    } else if (row.code !== null && context.nonRetriableCodes.has(row.code)) {
      reasons.nonRetriable++;
    } else if (row.attempts === max) {
      reasons.attemptsUsed++;
    } else {
      failures.push(
        `${row.id}: terminal with ${row.code ?? 'no code'} (not a non-retriable code) after ${row.attempts} of ${max} attempts`,
      );
    }
  }
  return invariantResult(
    'terminal only for a non-retriable code or with every attempt used',
    failures,
    `${rows.length} terminal rows: ${reasons.nonRetriable} non-retriable, ${reasons.attemptsUsed} with all attempts used, ${reasons.exhausted} exhausted`,
  );
}

/** No provider call after a row became final; no successful call for a row that ended Failed. */
export async function checkNoCallAfterFinal(client: Client): Promise<InvariantResult> {
  const { rows } = await client.query<{ id: string; problem: string }>(
    `WITH final AS (
       SELECT notification_id, min(at) AS at FROM chaos_audit
        WHERE new_status = 'Sent' OR (new_status = 'Failed' AND new_next_attempt_at IS NULL)
        GROUP BY notification_id)
     SELECT l.notification_id::text AS id,
            'call ' || l.call_no || ' by ' || l.instance || ' started '
              || round(extract(epoch FROM l.at - f.at) * 1000) || ' ms after the row became final' AS problem
       FROM chaos_ledger l JOIN final f USING (notification_id)
      WHERE l.event = 'started' AND l.at > f.at
     UNION ALL
     SELECT n.id::text, 'ended Failed although call ' || l.call_no || ' (' || coalesce(l.fault, '?') || ') succeeded'
       FROM notifications n JOIN chaos_ledger l ON l.notification_id = n.id AND l.event = 'succeeded'
      WHERE n.status = 'Failed'`,
  );
  return invariantResult(
    'no successful send after a row became terminal',
    rows.map((r) => `${r.id}: ${r.problem}`),
    'no call after a final write; every row with a successful call is Sent',
  );
}
