import type { Client } from 'pg';
import type { CrashEvent, SigtermRecord, UnexpectedExit } from './chaos-events';

export interface InvariantResult {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
}

export interface DuplicateFigures {
  /** Rows with more than one successful provider call. */
  readonly rows: number;
  /** Successful calls whose unit of work never committed. */
  readonly orphanCalls: number;
  /** Crash events that orphaned at least one successful call. */
  readonly crashEventsWithOrphans: number;
}

export interface InvariantCheck {
  readonly results: InvariantResult[];
  readonly duplicates: DuplicateFigures;
  readonly cycles: number;
  readonly auditedWrites: number;
}

/** How long after a successful call its COMMIT may lag and a crash still count as "between them". */
const CRASH_WINDOW_MS = 10_000;
/**
 * The row is locked (its transaction open) before the call starts: a backend
 * terminated in that gap, or while the call waits for its rate slot, loses the
 * outcome of a call that begins after it.
 */
const LOCKED_BEFORE_CALL_MS = 2_000;
const SAMPLE = 5;

function result(name: string, failures: string[], ok: string): InvariantResult {
  return failures.length === 0
    ? { name, passed: true, detail: ok }
    : {
        name,
        passed: false,
        detail: `${failures.length} violation(s): ${failures.slice(0, SAMPLE).join('; ')}${failures.length > SAMPLE ? '; …' : ''}`,
      };
}

const FINAL_SQL = `(status = 'Sent' OR (status = 'Failed' AND next_attempt_at IS NULL))`;

/**
 * The guarantees of DESIGN.md §7, checked against the database after the run:
 * the rows, the outbox, the audit trigger's record of every row write and
 * lease change, and the provider-call ledger.
 */
export async function checkInvariants(
  client: Client,
  context: {
    readonly seededRows: number;
    readonly concurrency: number;
    readonly crashes: readonly CrashEvent[];
    readonly sigterms: readonly SigtermRecord[];
    readonly unexpectedExits: readonly UnexpectedExit[];
    readonly timedOut: boolean;
  },
): Promise<InvariantCheck> {
  const results: InvariantResult[] = [];

  // 1. Every row ends Sent or terminal Failed; none lost.
  {
    const { rows } = await client.query<{ total: number; open: number }>(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE NOT ${FINAL_SQL})::int AS open
         FROM notifications`,
    );
    const failures: string[] = [];
    if (rows[0].total !== context.seededRows)
      failures.push(`${rows[0].total} rows in the table, ${context.seededRows} seeded`);
    if (rows[0].open > 0) failures.push(`${rows[0].open} rows not final`);
    if (context.timedOut) failures.push('the run hit its time cap');
    results.push(
      result('every row Sent or terminal Failed', failures, `${rows[0].total} rows, all final`),
    );
  }

  // 2. Exactly one outbox event per row, matching its final state, written by the final transition.
  {
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
    const failures = [
      ...rows.map((r) => `${r.id}: ${r.problem}`),
      ...txRows.map((r) => `${r.message_key}: ${r.problem}`),
    ];
    results.push(
      result(
        'exactly one outbox event per row, none for intermediate failures',
        failures,
        'one event per row, each written in the transaction of its final transition',
      ),
    );
  }

  // 3. INV-NTF-5 and "Sent and terminal rows are never touched again", from the audit trigger.
  {
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
    results.push(
      result(
        'no status change outside INV-NTF-5; Sent and terminal rows never touched',
        rows.map((r) => `${r.id}: ${r.problem}`),
        `${counts[0].n} audited writes, all allowed`,
      ),
    );
  }

  // 4. No provider call after a row became final; no successful call for a row that ended Failed.
  {
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
       SELECT n.id::text, 'ended Failed although call ' || l.call_no || ' succeeded'
         FROM notifications n JOIN chaos_ledger l ON l.notification_id = n.id AND l.event = 'succeeded'
        WHERE n.status = 'Failed'`,
    );
    results.push(
      result(
        'no successful send after a row became terminal',
        rows.map((r) => `${r.id}: ${r.problem}`),
        'no call after a final write; every row with a successful call is Sent',
      ),
    );
  }

  // 5. More than one successful call only where a crash fell between a call and its COMMIT.
  const duplicates = await checkDuplicates(client, context.crashes, context.concurrency, results);

  // 6. One lease owner at a time, and every row write made under the writer's own live lease.
  const { cycles, auditedWrites } = await checkLease(client, results);

  // 7. SIGTERM: exit code 0; no instance exits unless told to.
  {
    const failures = [
      ...context.sigterms
        .filter((s) => s.code !== 0 || s.signal !== null)
        .map(
          (s) =>
            `${s.instanceId} (${s.final ? 'final stop' : 'chaos SIGTERM'}) exited with code ${s.code} signal ${s.signal}`,
        ),
      ...context.unexpectedExits.map(
        (e) => `${e.instanceId} exited on its own (code ${e.code}, signal ${e.signal})`,
      ),
    ];
    const chaos = context.sigterms.filter((s) => !s.final);
    results.push(
      result(
        'SIGTERM exits 0; no instance dies unasked',
        failures,
        `${chaos.length} SIGTERM(s) (${chaos.filter((s) => s.midCycle).length} mid-cycle) and ${context.sigterms.length - chaos.length} final stops, all exit 0`,
      ),
    );
  }

  return { results, duplicates, cycles, auditedWrites };
}

interface SuccessCall {
  readonly notification_id: string;
  readonly instance: string;
  readonly call_no: number;
  readonly started_at: Date;
  readonly at: Date;
}

async function checkDuplicates(
  client: Client,
  crashes: readonly CrashEvent[],
  concurrency: number,
  results: InvariantResult[],
): Promise<DuplicateFigures> {
  const { rows: successes } = await client.query<SuccessCall>(
    `SELECT s.notification_id::text AS notification_id, s.instance, s.call_no,
            st.at AS started_at, s.at
       FROM chaos_ledger s
       JOIN chaos_ledger st ON st.notification_id = s.notification_id AND st.call_no = s.call_no
                           AND st.event = 'started'
      WHERE s.event = 'succeeded'
        AND s.notification_id IN (SELECT notification_id FROM chaos_ledger WHERE event = 'succeeded'
                                   GROUP BY notification_id HAVING count(*) > 1)
      ORDER BY s.notification_id, s.call_no`,
  );
  const { rows: sentWrites } = await client.query<{ id: string; app_name: string; at: Date }>(
    `SELECT notification_id::text AS id, app_name, at FROM chaos_audit
      WHERE new_status = 'Sent'
        AND notification_id IN (SELECT notification_id FROM chaos_ledger WHERE event = 'succeeded'
                                 GROUP BY notification_id HAVING count(*) > 1)`,
  );
  const sentBy = new Map(sentWrites.map((w) => [w.id, w]));
  const byRow = new Map<string, SuccessCall[]>();
  for (const s of successes)
    byRow.set(s.notification_id, [...(byRow.get(s.notification_id) ?? []), s]);

  const failures: string[] = [];
  const orphansPerCrash = new Map<CrashEvent, number>();
  let orphanCalls = 0;
  for (const [id, calls] of byRow) {
    const sent = sentBy.get(id);
    if (!sent) {
      failures.push(`${id}: ${calls.length} successful calls and no Sent write`);
      continue;
    }
    // The call that committed: the writer's last success before its Sent write.
    const committing = calls
      .filter((c) => c.instance === sent.app_name && c.at.getTime() <= sent.at.getTime())
      .at(-1);
    for (const call of calls) {
      if (call === committing) continue;
      orphanCalls++;
      const crash = crashes.find(
        (e) =>
          e.instanceId === call.instance &&
          e.at.getTime() >= call.started_at.getTime() - LOCKED_BEFORE_CALL_MS &&
          e.at.getTime() <= call.at.getTime() + CRASH_WINDOW_MS,
      );
      if (!crash) {
        failures.push(
          `${id}: call ${call.call_no} by ${call.instance} succeeded at ${call.at.toISOString()} and never committed, with no crash of that instance after it`,
        );
        continue;
      }
      orphansPerCrash.set(crash, (orphansPerCrash.get(crash) ?? 0) + 1);
    }
  }
  for (const [crash, orphans] of orphansPerCrash) {
    if (orphans > concurrency) {
      failures.push(
        `${crash.kind} of ${crash.instanceId} at ${crash.at.toISOString()} accounts for ${orphans} uncommitted successes, more than the ${concurrency} rows an instance has in flight`,
      );
    }
  }
  const figures: DuplicateFigures = {
    rows: byRow.size,
    orphanCalls,
    crashEventsWithOrphans: orphansPerCrash.size,
  };
  results.push(
    result(
      'duplicate sends only where a crash fell between call and commit',
      failures,
      `${byRow.size} row(s) with >1 successful call; ${orphanCalls} uncommitted success(es), each after a crash of its instance (${orphansPerCrash.size} of ${crashes.length} crash events)`,
    ),
  );
  return figures;
}

async function checkLease(
  client: Client,
  results: InvariantResult[],
): Promise<{ cycles: number; auditedWrites: number }> {
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
      WHERE lock_owner IS NULL OR lock_owner <> app_name OR lock_expires_at <= at`,
  );
  failures.push(...writes.map((w) => `${w.id}: ${w.problem}`));

  // Lease history: a new owner (token) only once the previous lease had expired, tokens count up by one.
  const { rows: history } = await client.query<{ id: string; problem: string }>(
    `SELECT id::text,
            CASE WHEN op <> 'UPDATE' AND op <> 'INSERT' THEN 'lease row ' || op
                 WHEN op = 'UPDATE' AND new_token = old_token AND new_owner <> old_owner THEN 'owner changed without a new token'
                 WHEN op = 'UPDATE' AND new_token <> old_token + 1 AND new_token <> old_token THEN 'token ' || old_token || ' → ' || new_token
                 ELSE 'token ' || new_token || ' acquired ' || round(extract(epoch FROM old_expires_at - new_acquired_at) * 1000) || ' ms before token ' || old_token || ' expired' END AS problem
       FROM chaos_lock_audit
      WHERE op = 'DELETE'
         OR (op = 'UPDATE' AND ((new_token = old_token AND new_owner <> old_owner)
              OR (new_token <> old_token AND (new_token <> old_token + 1 OR new_acquired_at < old_expires_at))))`,
  );
  failures.push(...history.map((h) => `lease change ${h.id}: ${h.problem}`));

  // The writes themselves, grouped by token, never interleave in time.
  const { rows: spans } = await client.query<{ token: string; first: Date; last: Date }>(
    `SELECT lock_token::text AS token, min(at) AS first, max(at) AS last
       FROM chaos_audit WHERE lock_token IS NOT NULL GROUP BY lock_token ORDER BY lock_token`,
  );
  for (let i = 1; i < spans.length; i++) {
    if (spans[i].first.getTime() < spans[i - 1].last.getTime()) {
      failures.push(
        `writes of token ${spans[i].token} began before the last write of token ${spans[i - 1].token}`,
      );
    }
  }
  const { rows: counts } = await client.query<{ writes: number; tokens: number }>(
    `SELECT (SELECT count(*)::int FROM chaos_audit) AS writes,
            (SELECT count(DISTINCT new_token)::int FROM chaos_lock_audit) AS tokens`,
  );
  results.push(
    result(
      'no two cycles held the lease at once',
      failures,
      `${counts[0].writes} row writes, each by the owner of a live lease; ${counts[0].tokens} leases (fencing tokens), ${spans.length} of them with writes, none overlapping`,
    ),
  );
  return { cycles: counts[0].tokens, auditedWrites: counts[0].writes };
}
