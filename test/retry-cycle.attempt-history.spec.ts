import type { DataSource } from 'typeorm';
import {
  ATTEMPT_HISTORY_LIMIT,
  NonRetriableDeliveryError,
  RetriableDeliveryError,
  ThrottledDeliveryError,
  type AttemptHistoryEntry,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { deferred, waitFor } from './support/deferred';
import { insertNotification, minutesAgo, readNotification } from './support/fixtures';
import { personalRunsIn } from './support/personal-data-runs';
import { settleGroups } from './support/settle-groups';
import { useRetryTestApp } from './support/retry-test-app';

const TIMEOUT_MS = 300;

async function historyOf(ds: DataSource, id: string): Promise<AttemptHistoryEntry[]> {
  const [row] = await ds.query(`SELECT attempt_history FROM notifications WHERE id = $1`, [id]);
  return row.attempt_history as AttemptHistoryEntry[];
}

/** The database's now, to judge an entry's `at` by (the app's clock is a test's). */
async function databaseNow(ds: DataSource): Promise<number> {
  const [row] = await ds.query(`SELECT now() AS now`);
  return (row.now as Date).getTime();
}

/** `at` is ISO 8601 in UTC, as toISOString() writes it, and the database's time of the write. */
function expectWrittenBetween(entry: AttemptHistoryEntry, from: number, to: number): void {
  expect(entry.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(new Date(entry.at).toISOString()).toBe(entry.at);
  const at = new Date(entry.at).getTime();
  expect(at).toBeGreaterThanOrEqual(from - 1);
  expect(at).toBeLessThanOrEqual(to + 1);
}

/**
 * DESIGN §2 `attempt_history`: every outcome write appends its attempt to the
 * row's history in the same statement (attempt number, database time, outcome,
 * error code, HTTP status, the redacted error text, the call's latency),
 * newest last, bounded to the last ATTEMPT_HISTORY_LIMIT.
 */
describe('attempt history (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    // No circuit: the bound's 22 failures in a row would open it.
    options: { concurrency: 20, settleMarginMs: 0, circuitBreaker: { enabled: false } },
    channels: [
      {
        key: 'email',
        maxAttempts: 3,
        timeoutMs: TIMEOUT_MS,
        backoffKind: 'Fixed',
        backoffBaseMs: 60_000,
        backoffMaxMs: null,
      },
      // Every attempt due again at once: one attempt per cycle, for as many cycles as a test runs.
      {
        key: 'sms',
        maxAttempts: 100,
        backoffKind: 'Fixed',
        backoffBaseMs: 0,
        backoffMaxMs: null,
      },
    ],
  });

  const dueRow = (attempts = 1, channel = 'email'): Promise<string> =>
    insertNotification(t.ds, {
      channel,
      status: 'Failed',
      attempts,
      nextAttemptAt: minutesAgo(t.app.clock.now(), 1),
    });

  it('starts empty and records a success: attempt, time, outcome sent, no error, the latency', async () => {
    const id = await dueRow(1);
    expect(await historyOf(t.ds, id)).toEqual([]);
    t.app.provider.respondWith(async (message) => {
      await new Promise((r) => setTimeout(r, 40));
      return { providerMessageId: `p-${message.id}` };
    });

    const from = await databaseNow(t.ds);
    expect(completed(await t.app.cycles.runCycle()).counts.sent).toBe(1);
    const to = await databaseNow(t.ds);

    const [entry, ...more] = await historyOf(t.ds, id);
    expect(more).toEqual([]);
    expect(entry).toEqual({
      attempt: 2,
      at: expect.any(String),
      outcome: 'sent',
      errorCode: null,
      httpStatus: null,
      error: null,
      latencyMs: expect.any(Number),
    });
    expectWrittenBetween(entry, from, to);
    // The provider's 40 ms, not the cycle's: well under the timeout.
    expect(entry.latencyMs).toBeGreaterThanOrEqual(35);
    expect(entry.latencyMs).toBeLessThan(TIMEOUT_MS);
  });

  it('records a retried failure with its code, HTTP status and the stored text, then a terminal one after it', async () => {
    const id = await dueRow(1);
    t.app.provider.respondWith(() => {
      throw new RetriableDeliveryError('http_503', 'upstream unavailable', { httpStatus: 503 });
    });
    expect(completed(await t.app.cycles.runCycle()).counts.retried).toBe(1);

    await t.ds.query(`UPDATE notifications SET next_attempt_at = $2 WHERE id = $1`, [
      id,
      minutesAgo(t.app.clock.now(), 1),
    ]);
    t.app.provider.respondWith(() => {
      throw new NonRetriableDeliveryError('invalid_recipient', 'mailbox does not exist', {
        httpStatus: 422,
      });
    });
    expect(completed(await t.app.cycles.runCycle()).counts.terminal).toBe(1);

    const row = await readNotification(t.ds, id);
    expect(row).toMatchObject({ status: 'Failed', attempts: 3, next_attempt_at: null });
    const history = await historyOf(t.ds, id);
    expect(history).toEqual([
      expect.objectContaining({
        attempt: 2,
        outcome: 'retriable',
        errorCode: 'http_503',
        httpStatus: 503,
        error: 'HTTP 503: upstream unavailable',
      }),
      expect.objectContaining({
        attempt: 3,
        outcome: 'non-retriable',
        errorCode: 'invalid_recipient',
        httpStatus: 422,
        // What the row stores, word for word.
        error: row.last_error_message,
      }),
    ]);
    expect(history[0].at <= history[1].at).toBe(true);
  });

  it('records a throttled attempt without counting it, and an exhausted row without a call', async () => {
    const throttled = await dueRow(1);
    t.app.provider.respondWith(() => {
      throw new ThrottledDeliveryError(120_000, 'rate_limited', 'slow down', { httpStatus: 429 });
    });
    expect(completed(await t.app.cycles.runCycle()).counts.deferred).toBe(1);
    expect(await historyOf(t.ds, throttled)).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'throttled',
        errorCode: 'rate_limited',
        httpStatus: 429,
        error: 'HTTP 429: slow down',
        latencyMs: expect.any(Number),
      }),
    ]);

    const exhausted = await dueRow(3);
    const calls = t.app.provider.calls.length;
    expect(completed(await t.app.cycles.runCycle()).counts.terminal).toBe(1);
    expect(t.app.provider.calls).toHaveLength(calls);
    expect(await historyOf(t.ds, exhausted)).toEqual([
      expect.objectContaining({
        attempt: 3,
        outcome: 'exhausted',
        errorCode: 'max_attempts_exhausted',
        httpStatus: null,
        latencyMs: null,
      }),
    ]);
  });

  it('records a call with no answer in time as a timeout, then the late success that followed', async () => {
    const id = await dueRow(1);
    const gate = deferred();
    t.app.provider.respondWith(async (message) => {
      await gate.promise;
      return { providerMessageId: `late-${message.id}` };
    });
    expect(completed(await t.app.cycles.runCycle()).counts.retried).toBe(1);
    const [timeout] = await historyOf(t.ds, id);
    expect(timeout).toMatchObject({
      attempt: 2,
      outcome: 'timeout',
      errorCode: 'provider_timeout',
      httpStatus: null,
    });
    expect(timeout.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);

    gate.resolve();
    await waitFor(() => t.app.logs.events('late-success-recorded').length > 0);
    expect(await readNotification(t.ds, id)).toMatchObject({ status: 'Sent', attempts: 2 });
    const history = await historyOf(t.ds, id);
    expect(history).toHaveLength(2);
    expect(history[0]).toEqual(timeout);
    expect(history[1]).toEqual({
      // The call was counted when its timeout was written: the same attempt.
      attempt: 2,
      at: expect.any(String),
      outcome: 'late-success',
      errorCode: null,
      httpStatus: null,
      error: null,
      latencyMs: expect.any(Number),
    });
    expect(history[1].latencyMs).toBeGreaterThanOrEqual(timeout.latencyMs!);
  });

  it('records the hold of an outcome that could not be written: the attempt, the hold’s code and text', async () => {
    const id = await dueRow(1);
    await t.ds.query(`
      CREATE FUNCTION refuse_sent() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status = 'Sent' THEN RAISE EXCEPTION 'this row cannot be Sent'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_sent BEFORE UPDATE ON notifications FOR EACH ROW EXECUTE FUNCTION refuse_sent();`);
    try {
      expect(completed(await t.app.cycles.runCycle()).counts.errors).toBe(1);
    } finally {
      await t.ds.query('DROP TRIGGER refuse_sent ON notifications; DROP FUNCTION refuse_sent()');
    }
    const row = await readNotification(t.ds, id);
    expect(row).toMatchObject({
      status: 'Failed',
      attempts: 2,
      last_error_code: 'outcome_not_recorded',
    });
    expect(await historyOf(t.ds, id)).toEqual([
      {
        attempt: 2,
        at: expect.any(String),
        // What the provider answered; the code and text say it was not recorded.
        outcome: 'sent',
        errorCode: 'outcome_not_recorded',
        httpStatus: null,
        error: row.last_error_message,
        latencyMs: expect.any(Number),
      },
    ]);
  });

  it('adds no entry for a row handed back untouched after its call (the lease lost meanwhile)', async () => {
    const id = await dueRow(1);
    t.app.provider.respondWith(async (message) => {
      // Another owner takes the lease while the call runs: the outcome is refused by the fence.
      await t.ds.query(
        `UPDATE distributed_locks SET owner = 'thief', fencing_token = fencing_token + 1,
                expires_at = now() + interval '1 minute'`,
      );
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await t.app.cycles.runCycle());

    expect(report.stopReason).toBe('lease-lost');
    expect(t.app.provider.calls).toHaveLength(1);
    expect(t.app.logs.events('claims-released')).toHaveLength(1);
    expect(await readNotification(t.ds, id)).toMatchObject({
      status: 'Failed',
      attempts: 1,
      claim_token: null,
    });
    expect(await historyOf(t.ds, id)).toEqual([]);
  });

  it(`keeps the last ${ATTEMPT_HISTORY_LIMIT} of 22 attempts, newest last`, async () => {
    const id = await dueRow(0, 'sms');
    let n = 0;
    t.app.provider.respondWith(() => {
      n++;
      throw new RetriableDeliveryError(`code_${n}`, `failure ${n}`, { httpStatus: 500 + n });
    });
    for (let cycle = 1; cycle <= 22; cycle++) {
      expect(completed(await t.app.cycles.runCycle()).counts.retried).toBe(1);
      if (cycle === ATTEMPT_HISTORY_LIMIT) {
        expect((await historyOf(t.ds, id)).map((e) => e.attempt)).toEqual(
          Array.from({ length: ATTEMPT_HISTORY_LIMIT }, (_, i) => i + 1),
        );
      }
    }
    expect((await readNotification(t.ds, id)).attempts).toBe(22);
    const history = await historyOf(t.ds, id);
    expect(history.map((e) => e.attempt)).toEqual(Array.from({ length: 20 }, (_, i) => i + 3));
    expect(history.map((e) => e.errorCode)).toEqual(
      Array.from({ length: 20 }, (_, i) => `code_${i + 3}`),
    );
    expect(history[19]).toMatchObject({ httpStatus: 522, error: 'HTTP 522: failure 22' });
  });

  it('cuts a longer history another writer left, and starts over on one that is not an array', async () => {
    const long = await dueRow(1, 'sms');
    const notArray = await dueRow(1, 'sms');
    await t.ds.query(
      `UPDATE notifications SET attempt_history = (SELECT jsonb_agg(jsonb_build_object('attempt', g)) FROM generate_series(1, 30) g) WHERE id = $1`,
      [long],
    );
    await t.ds.query(`UPDATE notifications SET attempt_history = '{"x": 1}' WHERE id = $1`, [
      notArray,
    ]);
    expect(completed(await t.app.cycles.runCycle()).counts.sent).toBe(2);

    const kept = await historyOf(t.ds, long);
    expect(kept).toHaveLength(ATTEMPT_HISTORY_LIMIT);
    expect(kept.slice(0, -1).map((e) => e.attempt)).toEqual(
      Array.from({ length: 19 }, (_, i) => i + 12),
    );
    expect(kept[19]).toMatchObject({ attempt: 2, outcome: 'sent' });
    expect(await historyOf(t.ds, notArray)).toEqual([
      expect.objectContaining({ attempt: 2, outcome: 'sent' }),
    ]);
  });

  it('writes each row of a group commit its own entry', async () => {
    const ROWS = 12;
    const ids = await t.dueRows(ROWS);
    const index = new Map(ids.map((id, i) => [id, i]));
    const gate = deferred();
    let started = 0;
    t.app.provider.respondWith(async (message) => {
      started++;
      await gate.promise;
      const i = index.get(message.id)!;
      if (i % 2 === 0) return { providerMessageId: `p-${i}` };
      throw new RetriableDeliveryError(`code_${i}`, `failure ${i}`, { httpStatus: 500 + i });
    });
    const groups = await settleGroups(async () => {
      const run = t.app.cycles.runCycle();
      while (started < ROWS) await new Promise((r) => setTimeout(r, 5));
      gate.resolve();
      completed(await run);
    });
    expect(Math.max(...groups)).toBeGreaterThan(1);

    for (const [id, i] of index) {
      const history = await historyOf(t.ds, id);
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject(
        i % 2 === 0
          ? { attempt: 2, outcome: 'sent', errorCode: null, httpStatus: null }
          : {
              attempt: 2,
              outcome: 'retriable',
              errorCode: `code_${i}`,
              httpStatus: 500 + i,
              error: `HTTP ${500 + i}: failure ${i}`,
            },
      );
    }
  });

  it('keeps personal data a provider echoes out of the history, as out of last_error_message', async () => {
    const address = 'amelie.durand.history@mail.example.net';
    const id = await insertNotification(t.ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(t.app.clock.now(), 1),
      recipientAddress: address,
      subject: 'Your payslip for Amélie Durand',
      body: 'Dear Amélie, your one-time code is 99QXHIST.',
    });
    t.app.provider.respondWith((m) => {
      throw new NonRetriableDeliveryError(
        m.recipientAddress,
        `unknown to=${encodeURIComponent(m.recipientAddress)} body "${m.body}"`,
        { httpStatus: 422 },
      );
    });
    completed(await t.app.cycles.runCycle());

    const row = await readNotification(t.ds, id);
    const [entry] = await historyOf(t.ds, id);
    expect(entry).toMatchObject({
      outcome: 'non-retriable',
      errorCode: 'provider_rejected',
      httpStatus: 422,
      error: row.last_error_message,
    });
    expect(entry.error).toMatch(/^HTTP 422: unknown to=\[redacted\]/);
    const personal = [
      address,
      'Your payslip for Amélie Durand',
      'Dear Amélie, your one-time code is 99QXHIST.',
    ];
    // The check finds the address in a raw echo: its silence below means something.
    expect(personalRunsIn(`to=${address}`, personal)).not.toEqual([]);
    expect(personalRunsIn(JSON.stringify(await historyOf(t.ds, id)), personal)).toEqual([]);
  });
});
