import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** Rows the admin console's specs show that no cycle writes without a worker: attempt history, parked events, cycles with chosen counts. */

export interface HistoryFixture {
  readonly outcome: string;
  readonly errorCode?: string | null;
  readonly httpStatus?: number | null;
  readonly error?: string | null;
  readonly latencyMs?: number | null;
}

/** The row's attempt_history as a worker leaves it after these attempts, one a minute ago each. */
export async function setAttemptHistory(
  dataSource: DataSource,
  id: string,
  attempts: readonly HistoryFixture[],
): Promise<void> {
  const now = Date.now();
  const history = attempts.map((a, i) => ({
    attempt: i + 1,
    at: new Date(now - (attempts.length - i) * 60_000).toISOString(),
    outcome: a.outcome,
    errorCode: a.errorCode ?? null,
    httpStatus: a.httpStatus ?? null,
    error: a.error ?? null,
    latencyMs: a.latencyMs ?? null,
  }));
  await dataSource.query(
    `UPDATE notifications SET attempt_history = $2::jsonb, attempts = $3 WHERE id = $1`,
    [id, JSON.stringify(history), attempts.length],
  );
}

/** An outbox event the relay gave up on (parked), for the notification `messageKey`. */
export async function insertParkedEvent(
  dataSource: DataSource,
  messageKey: string,
  lastError = 'nats: 503 no responders',
): Promise<string> {
  const id = randomUUID();
  await dataSource.query(
    `INSERT INTO notification_outbox
       (id, topic, message_key, contract_version, payload, attempts, parked_at, last_error)
     VALUES ($1, 'notifications.dispatched', $2, 1, $3::jsonb, 12, now(), $4)`,
    [id, messageKey, JSON.stringify({ notificationId: messageKey, sequence: 2 }), lastError],
  );
  return id;
}

export interface CycleFixture {
  readonly minutesAgo: number;
  readonly sent: number;
  readonly retried: number;
  readonly terminal: number;
}

/** A completed cycle in notification_retry_cycles, as the worker records one. */
export async function insertCompletedCycle(
  dataSource: DataSource,
  cycle: CycleFixture,
): Promise<void> {
  await dataSource.query(
    `INSERT INTO notification_retry_cycles
       (run_id, correlation_id, instance_id, fencing_token, started_at, finished_at, duration_ms,
        stop_reason, processed, sent, retried, terminal, deferred, skipped, claims_lost, errors)
     VALUES ($1, $6, 'instance-a', 7, now() - make_interval(mins => $2::int),
             now() - make_interval(mins => $2::int) + interval '1.5 seconds', 1500, 'drained',
             $3::int + $4::int + $5::int, $3, $4, $5, 0, 0, 0, 0)`,
    [randomUUID(), cycle.minutesAgo, cycle.sent, cycle.retried, cycle.terminal, 'cycle-fixture'],
  );
}
