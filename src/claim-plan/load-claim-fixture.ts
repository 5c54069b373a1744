import type { DataSource } from 'typeorm';

export interface ClaimFixtureSize {
  /** Total rows; split across states the way a long-running table looks. */
  readonly rows: number;
}

/**
 * Fills `notifications` like a production table after months: mostly Sent, a
 * backlog of due Failed rows, a disabled channel's due rows at the very head,
 * future scheduled Pending rows and terminal failures. Returns the due time
 * threshold to claim with.
 */
export async function loadClaimFixture(
  dataSource: DataSource,
  { rows }: ClaimFixtureSize,
): Promise<Date> {
  const now = new Date('2026-11-30T12:00:00Z');
  const share = (fraction: number) => Math.max(1, Math.floor(rows * fraction));
  await dataSource.query(
    `INSERT INTO notification_channels (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms,
                                        backoff_max_ms, backoff_multiplier, timeout_ms)
     VALUES ('email', true,  'stub-email', 5, 'Exponential', 60000, 3600000, 2, 5000),
            ('push',  false, 'stub-push',  5, 'Fixed',       60000, NULL,    NULL, 5000)
     ON CONFLICT (key) DO NOTHING`,
  );
  const insert = (count: number, select: string) =>
    dataSource.query(
      `INSERT INTO notifications (channel, recipient_address, body, status, attempts, next_attempt_at, scheduled_at, sent_at)
       SELECT ${select} FROM generate_series(1, $1::int) AS g, (SELECT $2::timestamptz AS now) AS t`,
      [count, now],
    );
  // Sent: the bulk of any real table, invisible to the claim.
  await insert(
    share(0.5),
    `'email', 'u' || g || '@example.com', 'b', 'Sent', 1, NULL, NULL, t.now - g * interval '1 second'`,
  );
  // A disabled channel's backlog, oldest of all, sitting at the head of any due-time order.
  await insert(
    share(0.1),
    `'push', 'device-' || g, 'b', 'Failed', 1, t.now - interval '30 days' + g * interval '1 second', NULL, NULL`,
  );
  // Due retries of an enabled channel.
  await insert(
    share(0.25),
    `'email', 'u' || g || '@example.com', 'b', 'Failed', 1 + g % 3, t.now - g * interval '1 second', NULL, NULL`,
  );
  // Deferred by quiet hours, not due yet.
  await insert(
    share(0.1),
    `'email', 'u' || g || '@example.com', 'b', 'Pending', 0, NULL, t.now + g * interval '1 second', NULL`,
  );
  // Terminal failures: Failed with no next attempt.
  await insert(
    share(0.05),
    `'email', 'u' || g || '@example.com', 'b', 'Failed', 5, NULL, NULL, NULL`,
  );
  await dataSource.query('VACUUM ANALYZE notifications');
  return now;
}
