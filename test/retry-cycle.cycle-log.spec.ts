import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { NonRetriableDeliveryError, RetriableDeliveryError } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { insertNotification, minutesAgo, readNotification } from './support/fixtures';
import { useRetryTestApp } from './support/retry-test-app';

const DAY_MS = 24 * 3_600_000;

interface CycleLogRow {
  run_id: string;
  correlation_id: string;
  instance_id: string;
  fencing_token: string;
  started_at: Date;
  finished_at: Date;
  duration_ms: number;
  stop_reason: string;
  processed: number;
  sent: number;
  retried: number;
  terminal: number;
  deferred: number;
  skipped: number;
  claims_lost: number;
  errors: number;
}

const cycleLog = (ds: DataSource): Promise<CycleLogRow[]> =>
  ds.query(`SELECT * FROM notification_retry_cycles ORDER BY finished_at, run_id`);

/** A row of the log as another, older cycle left it, finished `ageMs` ago by the database clock. */
async function insertLoggedCycle(ds: DataSource, ageMs: number): Promise<string> {
  const runId = randomUUID();
  await ds.query(
    `INSERT INTO notification_retry_cycles
       (run_id, correlation_id, instance_id, fencing_token, started_at, finished_at, duration_ms,
        stop_reason, processed, sent, retried, terminal, deferred, skipped, claims_lost, errors)
     VALUES ($1::uuid, $1::text, 'older', 1, now() - $2 * interval '1 millisecond' - interval '1 second',
             now() - $2 * interval '1 millisecond', 1000, 'no-more-due', 0, 0, 0, 0, 0, 0, 0, 0)`,
    [runId, ageMs],
  );
  return runId;
}

/**
 * DESIGN §8 "Cycles": the cycle owner writes one `notification_retry_cycles`
 * row at the end of every completed cycle and deletes the rows older than
 * `cycleLogRetentionMs`, at most once a minute; a failed write never fails
 * the cycle.
 */
describe('the cycle log (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    options: { instanceId: 'log-writer', circuitBreaker: { enabled: false } },
    channels: [{ key: 'email', maxAttempts: 3 }],
  });

  const dueRow = (attempts: number): Promise<string> =>
    insertNotification(t.ds, {
      status: 'Failed',
      attempts,
      nextAttemptAt: minutesAgo(t.app.clock.now(), 1),
    });

  it('writes one row per completed cycle with its owner, times, stop reason and counts', async () => {
    const sent = await dueRow(1);
    const retried = await dueRow(1);
    const terminal = await dueRow(1);
    t.app.provider.respondWith((message) => {
      if (message.id === retried) throw new RetriableDeliveryError('http_503', 'unavailable');
      if (message.id === terminal) throw new NonRetriableDeliveryError('invalid', 'no such box');
      return { providerMessageId: `p-${message.id}` };
    });

    const first = completed(await t.app.cycles.runCycle());
    const second = completed(await t.app.cycles.runCycle());

    expect((await readNotification(t.ds, sent)).status).toBe('Sent');
    const rows = await cycleLog(t.ds);
    // The test's clock stands still: both finished at the same instant.
    expect(rows.map((row) => row.run_id).sort()).toEqual([first.runId, second.runId].sort());
    const row = (runId: string) => rows.find((r) => r.run_id === runId);
    expect(row(first.runId)).toEqual({
      run_id: first.runId,
      correlation_id: first.correlationId,
      instance_id: 'log-writer',
      fencing_token: String(first.fencingToken),
      started_at: first.startedAt,
      finished_at: first.finishedAt,
      duration_ms: first.durationMs,
      stop_reason: first.stopReason,
      processed: 3,
      sent: 1,
      retried: 1,
      terminal: 1,
      deferred: 0,
      skipped: 0,
      claims_lost: 0,
      errors: 0,
    });
    expect(row(second.runId)).toMatchObject({
      processed: 0,
      sent: 0,
      stop_reason: second.stopReason,
    });
  });

  it('writes no row for a cycle that did not run (the lease held elsewhere)', async () => {
    await t.ds.query(
      `INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
       VALUES ('notifications:retry-worker', 'someone-else', 1, now(), now() + interval '1 minute')`,
    );
    const report = await t.app.cycles.runCycle();
    expect(report).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });
    expect(await cycleLog(t.ds)).toEqual([]);
  });

  it('deletes only rows older than the retention, and at most once a minute', async () => {
    // The database's clock: the log's times and the retention's are then the same one.
    const app = await t.start({ clock: 'database', options: { cycleLogRetentionMs: DAY_MS } });
    const old = [
      await insertLoggedCycle(t.ds, 3 * DAY_MS),
      await insertLoggedCycle(t.ds, DAY_MS + 60_000),
    ];
    const recent = await insertLoggedCycle(t.ds, DAY_MS - 60_000);

    // The instance's first cycle prunes.
    const first = completed(await app.cycles.runCycle());
    const kept = (await cycleLog(t.ds)).map((row) => row.run_id);
    expect(kept).toEqual([recent, first.runId]);
    for (const runId of old) expect(kept).not.toContain(runId);

    // Its next one, within the minute, does not.
    const later = await insertLoggedCycle(t.ds, 2 * DAY_MS);
    const second = completed(await app.cycles.runCycle());
    expect((await cycleLog(t.ds)).map((row) => row.run_id)).toEqual([
      later,
      recent,
      first.runId,
      second.runId,
    ]);
  });

  it('completes the cycle, its outcomes written and its lease released, when the log write fails', async () => {
    const id = await dueRow(1);
    await t.ds.query(`
      CREATE FUNCTION refuse_cycle_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the cycle log is unavailable'; END $$;
      CREATE TRIGGER refuse_cycle_log BEFORE INSERT ON notification_retry_cycles
        FOR EACH ROW EXECUTE FUNCTION refuse_cycle_log();`);
    let report!: ReturnType<typeof completed>;
    try {
      report = completed(await t.app.cycles.runCycle());
    } finally {
      await t.ds.query(
        'DROP TRIGGER refuse_cycle_log ON notification_retry_cycles; DROP FUNCTION refuse_cycle_log()',
      );
    }

    expect(report.counts).toMatchObject({ sent: 1, errors: 0 });
    expect((await readNotification(t.ds, id)).status).toBe('Sent');
    expect(await cycleLog(t.ds)).toEqual([]);
    const [failed, ...more] = t.app.logs.events('cycle-log-failed');
    expect(more).toEqual([]);
    expect(failed).toMatchObject({
      runId: report.runId,
      step: 'record',
      error: expect.stringContaining('the cycle log is unavailable'),
    });
    const [lock] = await t.ds.query(
      `SELECT expires_at <= now() AS released, last_completed_by FROM distributed_locks`,
    );
    expect(lock).toEqual({ released: true, last_completed_by: 'log-writer' });
  });
});
