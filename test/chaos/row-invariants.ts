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

/**
 * One final outbox event per row, plus a Sent after a terminal Failed only
 * where a late success followed it (the chaos run redrives nothing, so no row
 * has a second episode); every event numbered, the row's events numbered 1..n
 * as its event_sequence says, and the latest by sequence matching the row's
 * final state. Each event written by the statement of a final transition.
 */
export async function checkOneEventPerRow(client: Client): Promise<InvariantResult> {
  const seq = `CASE WHEN jsonb_typeof(payload->'sequence') = 'number' THEN (payload->>'sequence')::numeric END`;
  const { rows } = await client.query<{ id: string; problem: string }>(
    `WITH numbered AS (
       SELECT message_key, payload, ${seq} AS seq FROM notification_outbox),
     events AS (
       SELECT message_key, count(*)::int AS n, count(seq)::int AS numbered,
              count(DISTINCT seq)::int AS distinct_seqs, min(seq) AS min_seq, max(seq) AS max_seq,
              string_agg(payload->>'status', ',' ORDER BY seq) AS statuses,
              bool_and(payload->>'notificationId' = message_key) AS keyed
         FROM numbered GROUP BY message_key),
     latest AS (
       SELECT DISTINCT ON (message_key) message_key, payload->>'status' AS status,
              (payload->>'attempts')::int AS attempts
         FROM numbered ORDER BY message_key, seq DESC NULLS LAST),
     checked AS (
       SELECT n.id::text AS id,
              CASE WHEN e.n IS NULL THEN 'no event'
                   WHEN NOT e.keyed THEN 'payload notificationId differs from the key'
                   WHEN e.numbered < e.n THEN (e.n - e.numbered) || ' event(s) without a sequence'
                   WHEN e.distinct_seqs < e.n OR e.min_seq <> 1 OR e.max_seq <> e.n
                     THEN 'sequences ' || e.min_seq || '..' || e.max_seq || ' over ' || e.n || ' events'
                   WHEN e.max_seq <> n.event_sequence
                     THEN 'latest sequence ' || e.max_seq || ', row event_sequence ' || n.event_sequence
                   WHEN e.n > 1 AND e.statuses <> 'Failed,Sent'
                     THEN e.n || ' events (' || e.statuses || ' by sequence)'
                   WHEN l.status IS DISTINCT FROM n.status THEN 'latest event ' || l.status || ', row ' || n.status
                   WHEN l.attempts IS DISTINCT FROM n.attempts
                     THEN 'latest event attempts ' || l.attempts || ', row ' || n.attempts
              END AS problem
         FROM notifications n
         LEFT JOIN events e ON e.message_key = n.id::text
         LEFT JOIN latest l ON l.message_key = n.id::text)
     SELECT id, problem FROM checked WHERE problem IS NOT NULL
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
  const { rows: counts } = await client.query<{ twice: number }>(
    `SELECT count(*)::int AS twice FROM (
       SELECT message_key FROM notification_outbox GROUP BY message_key HAVING count(*) > 1) AS k`,
  );
  return invariantResult(
    'one final outbox event per row (and a Sent after a late success), numbered by sequence, none for intermediate failures',
    [
      ...rows.map((r) => `${r.id}: ${r.problem}`),
      ...txRows.map((r) => `${r.message_key}: ${r.problem}`),
    ],
    `one event per row, ${counts[0].twice} with a late success's Sent after their terminal Failed; sequences 1..n, the latest matching the row; each written by the statement of its final transition`,
  );
}

/**
 * INV-NTF-5 and "Sent rows are never touched again; a terminal row changes
 * only by a late success (→ Sent)", from the audit trigger (the chaos run
 * redrives nothing).
 */
export async function checkTransitionsAllowed(client: Client): Promise<InvariantResult> {
  const { rows } = await client.query<{ id: string; problem: string }>(
    `SELECT notification_id::text AS id,
            CASE WHEN op <> 'UPDATE' THEN op
                 WHEN old_status = 'Sent' THEN 'Sent row written (→ ' || new_status || ')'
                 WHEN old_status = 'Failed' AND old_next_attempt_at IS NULL AND NOT (new_status = 'Sent' AND late_success)
                   THEN 'terminal row written (→ ' || new_status || CASE WHEN late_success THEN '' ELSE ', not by a late success' END || ')'
                 WHEN new_attempts < old_attempts THEN 'attempts went down'
                 WHEN new_attempts > old_attempts + 1 THEN 'attempts jumped by ' || (new_attempts - old_attempts)
                 WHEN old_status = 'Pending' AND new_status = 'Pending' AND new_attempts <> old_attempts THEN 'Pending kept but an attempt counted'
                 ELSE old_status || '→' || new_status END AS problem
       FROM chaos_audit
      WHERE op <> 'UPDATE'
         OR old_status = 'Sent'
         OR (old_status = 'Failed' AND old_next_attempt_at IS NULL AND NOT (new_status = 'Sent' AND late_success))
         OR new_attempts < old_attempts OR new_attempts > old_attempts + 1
         OR NOT ((old_status, new_status) IN (('Failed','Sent'), ('Failed','Failed'),
                 ('Pending','Sent'), ('Pending','Failed'), ('Pending','Pending')))
         OR (old_status = 'Pending' AND new_status = 'Pending' AND new_attempts <> old_attempts)`,
  );
  const { rows: counts } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chaos_audit`,
  );
  return invariantResult(
    'no status change outside INV-NTF-5; Sent rows never touched, terminal ones only by a late success',
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

/** No provider call after a row became final. */
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
      WHERE l.event = 'started' AND l.at > f.at`,
  );
  return invariantResult(
    'no provider call after a row became final',
    rows.map((r) => `${r.id}: ${r.problem}`),
    'no call after a final write',
  );
}

/**
 * DESIGN §7: a delivered notification never ends terminal Failed because its
 * answer came late. Judged by the ledger: the provider accepted the message
 * (a call's `succeeded` event, recorded when it accepts, however late it
 * answers), so the row must end Sent.
 */
export async function checkDeliveredEndsSent(client: Client): Promise<InvariantResult> {
  const { rows } = await client.query<{ id: string; problem: string }>(
    `SELECT n.id::text AS id,
            'ended ' || CASE WHEN n.status = 'Failed' AND n.next_attempt_at IS NULL THEN 'terminal Failed'
                             ELSE n.status END
              || ' although call ' || l.call_no || ' (' || coalesce(l.fault, '?') || ') succeeded' AS problem
       FROM notifications n
       JOIN LATERAL (SELECT call_no, fault FROM chaos_ledger
                      WHERE notification_id = n.id AND event = 'succeeded'
                      ORDER BY id LIMIT 1) l ON true
      WHERE n.status <> 'Sent'
      ORDER BY n.id`,
  );
  const { rows: counts } = await client.query<{ delivered: number }>(
    `SELECT count(DISTINCT notification_id)::int AS delivered FROM chaos_ledger WHERE event = 'succeeded'`,
  );
  return invariantResult(
    'every notification with a successful call ends Sent',
    rows.map((r) => `${r.id}: ${r.problem}`),
    `${counts[0].delivered} notifications with a successful call, all Sent`,
  );
}
