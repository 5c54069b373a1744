import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

export interface TerminalRowFixture {
  readonly channel?: string;
  readonly errorCode?: string | null;
  readonly attempts?: number;
  readonly address?: string;
  /** The stored error text; default `provider said <code>`. */
  readonly errorMessage?: string;
  /** When the row became terminal (its updated_at); default now. */
  readonly failedAt?: Date;
}

/** A terminal Failed row (Failed, no next attempt) with its last error, as the worker leaves one. */
export async function insertTerminal(
  dataSource: DataSource,
  row: TerminalRowFixture = {},
): Promise<string> {
  const id = randomUUID();
  await dataSource.query(
    `INSERT INTO notifications
       (id, channel, recipient_address, subject, body, status, attempts, next_attempt_at,
        last_error_code, last_error_message, updated_at)
     VALUES ($1, $2, $3, 'Your statement', 'Hello, your statement is ready', 'Failed', $4, NULL,
             $5, $6, coalesce($7::timestamptz, now()))`,
    [
      id,
      row.channel ?? 'email',
      row.address ?? `person-${id.slice(0, 8)}@example.com`,
      row.attempts ?? 3,
      row.errorCode === undefined ? 'provider_unavailable' : row.errorCode,
      row.errorMessage ??
        (row.errorCode === null
          ? null
          : `provider said ${row.errorCode ?? 'provider_unavailable'}`),
      row.failedAt ?? null,
    ],
  );
  return id;
}

/** Many terminal rows in one statement (batch tests). */
export async function insertTerminalRows(
  dataSource: DataSource,
  count: number,
  channel: string,
  errorCode: string,
): Promise<void> {
  await dataSource.query(
    `INSERT INTO notifications
       (channel, recipient_address, body, status, attempts, last_error_code, last_error_message)
     SELECT $1, 'bulk-' || g || '@example.com', 'body', 'Failed', 5, $2, 'bulk failure'
       FROM generate_series(1, $3) AS g`,
    [channel, errorCode, count],
  );
}

/** Stamps a live claim on a row, as a worker in the middle of a provider call holds it. */
export async function claimRow(dataSource: DataSource, id: string, forMs = 60_000): Promise<void> {
  await dataSource.query(
    `UPDATE notifications SET claim_token = gen_random_uuid(),
            claim_expires_at = now() + make_interval(secs => $2::double precision / 1000)
      WHERE id = $1`,
    [id, forMs],
  );
}

export interface OperatorActionRow {
  action: string;
  actor: string;
  reason: string;
  filter: Record<string, unknown>;
  rows: number;
}

export function operatorActions(dataSource: DataSource): Promise<OperatorActionRow[]> {
  return dataSource.query(
    `SELECT action, actor, reason, filter, rows FROM notification_operator_actions ORDER BY created_at, id`,
  );
}

/** Row counts per status/terminal state, for "nothing else changed" checks. */
export async function statusCounts(dataSource: DataSource): Promise<Record<string, number>> {
  const rows: Array<{ state: string; count: number }> = await dataSource.query(
    `SELECT CASE WHEN status = 'Failed' AND next_attempt_at IS NULL THEN 'terminal'
                 WHEN status = 'Failed' THEN 'retrying' ELSE status END AS state,
            count(*)::int AS count
       FROM notifications GROUP BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.count]));
}
