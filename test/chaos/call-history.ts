import type { Client } from 'pg';
import type { LedgerOutcome } from './call-ledger';

/** One provider call from the ledger. Times are database-clock microseconds since the epoch. */
export interface LedgerCall {
  /** The ledger id of its `started` event. */
  readonly callId: string;
  readonly notificationId: string;
  readonly instance: string;
  readonly callNo: number;
  readonly fault: string | null;
  readonly startedAt: number;
  /** Null when the process died before the adapter recorded one. */
  readonly outcome: LedgerOutcome | null;
  readonly outcomeAt: number | null;
  /** When the adapter returned or threw; null when that is not known (it died first). */
  readonly answeredAt: number | null;
}

/** One committed write of a `notifications` row, from the audit trigger. */
export interface AuditedWrite {
  /** The audit row's id: the order the writes' statements ran in. */
  readonly seq: number;
  readonly notificationId: string;
  /** application_name of the writer's session: the instance id. */
  readonly writer: string;
  readonly oldStatus: string | null;
  readonly newStatus: string | null;
  readonly newAttempts: number | null;
  /** Failed with no next attempt: terminal. */
  readonly terminal: boolean;
  readonly errorCode: string | null;
  readonly at: number;
  /**
   * Written by the late-success statement: the Sent of a call answered after
   * its attempt was written off. It is no call's unit of work (that was the
   * write-off); see `lateSuccessOwners`.
   */
  readonly lateSuccess: boolean;
}

export interface CallHistory {
  readonly calls: readonly LedgerCall[];
  readonly writes: readonly AuditedWrite[];
}

/** The faults whose answer comes after their outcome event, and is recorded as `answered`. */
const ANSWERED_LATER = new Set([
  'hang',
  'late-success',
  'success-after-margin',
  'success-after-abort',
]);

/**
 * Codes of the writes a unit of work makes without calling the provider (the
 * row had used its attempts; the provider's circuit was open): they are never
 * the outcome of an earlier call.
 */
export const NO_CALL_CODES: ReadonlySet<string> = new Set([
  'max_attempts_exhausted',
  'circuit_open',
]);

/** `last_error_code` of the hold a worker writes when it could not record a call's outcome. */
export const OUTCOME_NOT_RECORDED = 'outcome_not_recorded';

const micros = (column: string): string =>
  `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

export async function loadCallHistory(client: Client): Promise<CallHistory> {
  const { rows: calls } = await client.query<{
    call_id: string;
    notification_id: string;
    instance: string;
    call_no: number;
    fault: string | null;
    started_at: string;
    outcome: LedgerOutcome | null;
    outcome_at: string | null;
    answered_at: string | null;
  }>(
    `SELECT s.id::text AS call_id, s.notification_id::text AS notification_id, s.instance,
            s.call_no, o.fault, ${micros('s.at')} AS started_at, o.event AS outcome,
            ${micros('o.at')} AS outcome_at, ${micros('a.at')} AS answered_at
       FROM chaos_ledger s
       LEFT JOIN LATERAL (SELECT event, fault, at FROM chaos_ledger
                           WHERE call_id = s.id AND event <> 'answered' ORDER BY id LIMIT 1) o ON true
       LEFT JOIN LATERAL (SELECT at FROM chaos_ledger
                           WHERE call_id = s.id AND event = 'answered' ORDER BY id LIMIT 1) a ON true
      WHERE s.event = 'started'
      ORDER BY s.id`,
  );
  const { rows: writes } = await client.query<{
    seq: string;
    notification_id: string;
    writer: string;
    old_status: string | null;
    new_status: string | null;
    new_attempts: number | null;
    terminal: boolean;
    error_code: string | null;
    at: string;
    late_success: boolean;
  }>(
    `SELECT id::text AS seq, notification_id::text AS notification_id, app_name AS writer,
            old_status, new_status, new_attempts,
            (new_status = 'Failed' AND new_next_attempt_at IS NULL) AS terminal,
            new_error_code AS error_code, ${micros('at')} AS at, late_success
       FROM chaos_audit WHERE op = 'UPDATE' ORDER BY id`,
  );
  const num = (value: string | null): number | null => (value === null ? null : Number(value));
  return {
    calls: calls.map((c) => ({
      callId: c.call_id,
      notificationId: c.notification_id,
      instance: c.instance,
      callNo: c.call_no,
      fault: c.fault,
      startedAt: Number(c.started_at),
      outcome: c.outcome,
      outcomeAt: num(c.outcome_at),
      answeredAt: ANSWERED_LATER.has(c.fault ?? '') ? num(c.answered_at) : num(c.outcome_at),
    })),
    writes: writes.map((w) => ({
      seq: Number(w.seq),
      notificationId: w.notification_id,
      writer: w.writer,
      oldStatus: w.old_status,
      newStatus: w.new_status,
      newAttempts: w.new_attempts,
      terminal: w.terminal,
      errorCode: w.error_code,
      at: Number(w.at),
      lateSuccess: w.late_success,
    })),
  };
}

/** Calls (or writes) per row and instance, each list in time order. */
export function byRowAndInstance<T extends { notificationId: string }>(
  items: readonly T[],
  instanceOf: (item: T) => string,
  timeOf: (item: T) => number,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = `${item.notificationId}\u0000${instanceOf(item)}`;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  for (const group of groups.values()) group.sort((a, b) => timeOf(a) - timeOf(b));
  return groups;
}

/**
 * The unit of work of each call: decided by order, not by a time window. The
 * unit of work of call C by instance I on row R is the first audited write by
 * I on R after C's outcome was recorded (after its start, if it recorded none)
 * and before I's next call on R starts, leaving out writes that record no call
 * (NO_CALL_CODES) and late-success writes (the late answer of a call whose
 * unit of work wrote it off). Audit rows exist only for committed writes (the trigger runs
 * in the writer's transaction), so a call without one is a call whose unit of
 * work did not commit. The ledger and the audit share the database clock, and
 * the adapter's outcome is committed before it answers, so a unit of work's
 * write always comes after its call's outcome.
 */
export function unitsOfWork(history: CallHistory): Map<string, AuditedWrite | null> {
  const writes = byRowAndInstance(
    history.writes,
    (w) => w.writer,
    (w) => w.at,
  );
  const calls = byRowAndInstance(
    history.calls,
    (c) => c.instance,
    (c) => c.startedAt,
  );
  const units = new Map<string, AuditedWrite | null>();
  for (const [key, group] of calls) {
    const candidates = (writes.get(key) ?? []).filter(
      (w) => !w.lateSuccess && !NO_CALL_CODES.has(w.errorCode ?? ''),
    );
    group.forEach((call, i) => {
      const after = call.outcomeAt ?? call.startedAt;
      const before = group[i + 1]?.startedAt ?? Number.POSITIVE_INFINITY;
      units.set(call.callId, candidates.find((w) => w.at > after && w.at < before) ?? null);
    });
  }
  return units;
}

/**
 * The call each late-success write records: the latest successful call of
 * the write's own instance on that row that had answered before the write.
 * A late-success write with none is missing here (checkSentFromSuccess
 * reports it).
 */
export function lateSuccessOwners(history: CallHistory): Map<number, LedgerCall> {
  const calls = byRowAndInstance(
    history.calls.filter((c) => c.outcome === 'succeeded' && c.answeredAt !== null),
    (c) => c.instance,
    (c) => c.answeredAt as number,
  );
  const owners = new Map<number, LedgerCall>();
  for (const write of history.writes) {
    if (!write.lateSuccess) continue;
    const answered = (calls.get(`${write.notificationId}\u0000${write.writer}`) ?? []).filter(
      (c) => (c.answeredAt as number) <= write.at,
    );
    const owner = answered[answered.length - 1];
    if (owner) owners.set(write.seq, owner);
  }
  return owners;
}

/** "row …: call 3 by chaos-worker-i1-g2 (late-success)" */
export function describeCall(call: LedgerCall): string {
  return `call ${call.callNo} by ${call.instance}${call.fault ? ` (${call.fault})` : ''}`;
}

export function describeWrite(write: AuditedWrite): string {
  const kind = write.terminal ? 'terminal ' : write.lateSuccess ? 'late-success ' : '';
  return `${write.oldStatus}→${kind}${write.newStatus} (${write.errorCode ?? 'no code'}, attempts ${write.newAttempts})`;
}
