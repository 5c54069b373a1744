import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** The columns a console-state row is made of; everything else takes the table's default. */
export interface StateRowFixture {
  readonly channel?: string;
  readonly status: 'Pending' | 'Sent' | 'Failed';
  readonly attempts?: number;
  readonly nextAttemptAt?: Date | null;
  readonly scheduledAt?: Date | null;
  readonly updatedAt?: Date;
  readonly errorCode?: string | null;
  readonly errorMessage?: string | null;
  readonly address?: string;
  /** A live (or lapsed) claim until this time. */
  readonly claimedUntil?: Date;
  readonly attemptHistory?: unknown;
}

/** `count` rows of one shape in one statement (equal timestamps, distinct ids); their ids. */
export async function insertStateRows(
  dataSource: DataSource,
  count: number,
  row: StateRowFixture,
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await dataSource.query(
    `INSERT INTO notifications
       (id, channel, recipient_address, subject, body, status, attempts, next_attempt_at, scheduled_at,
        last_error_code, last_error_message, updated_at, claim_token, claim_expires_at, attempt_history,
        sent_at)
     SELECT id, $2, coalesce($3, 'person-' || left(id::text, 8) || '@example.com'), 'Your statement',
            'Hello, your statement is ready.', $4, $5, $6, $7, $8, $9, coalesce($10::timestamptz, now()),
            CASE WHEN $11::timestamptz IS NULL THEN NULL ELSE gen_random_uuid() END, $11,
            coalesce($12::jsonb, '[]'::jsonb), CASE WHEN $4 = 'Sent' THEN now() END
       FROM unnest($1::uuid[]) AS t(id)`,
    [
      ids,
      row.channel ?? 'email',
      row.address ?? null,
      row.status,
      row.attempts ?? 1,
      row.nextAttemptAt ?? null,
      row.scheduledAt ?? null,
      row.errorCode ?? null,
      row.errorMessage ?? null,
      row.updatedAt ?? null,
      row.claimedUntil ?? null,
      row.attemptHistory === undefined ? null : JSON.stringify(row.attemptHistory),
    ],
  );
  return ids;
}

export const secondsFromNow = (seconds: number): Date => new Date(Date.now() + seconds * 1000);

/** A completed cycle as the cycle's owner records it, `minutesAgo` minutes ago. */
export async function insertCycle(
  dataSource: DataSource,
  minutesAgo: number,
  counts: { processed?: number; sent?: number } = {},
): Promise<string> {
  const runId = randomUUID();
  await dataSource.query(
    `INSERT INTO notification_retry_cycles
       (run_id, correlation_id, instance_id, fencing_token, started_at, finished_at, duration_ms,
        stop_reason, processed, sent, retried, terminal, deferred, skipped, claims_lost, errors)
     VALUES ($1::uuid, 'corr-' || left($1::text, 8), 'instance-a', 7,
             now() - make_interval(mins => $2::int) - interval '2 seconds', now() - make_interval(mins => $2::int),
             2000, 'drained', $3, $4, 1, 0, 0, 0, 0, 0)`,
    [runId, minutesAgo, counts.processed ?? 3, counts.sent ?? 2],
  );
  return runId;
}
