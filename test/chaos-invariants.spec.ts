import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { lateSuccessOwners, loadCallHistory, unitsOfWork } from './chaos/call-history';
import { CHAOS_CHANNELS } from './chaos/chaos-config';
import { installChaosSchema } from './chaos/chaos-database';
import { NON_RETRIABLE_CODES, seededUuid } from './chaos/fault-plan';
import type { InvariantResult } from './chaos/invariant-result';
import { checkFencingOrder, checkLeaseOwnership } from './chaos/lease-invariants';
import { checkProcessExits } from './chaos/process-invariants';
import {
  checkDeliveredEndsSent,
  checkEveryRowFinal,
  checkNoCallAfterFinal,
  checkOneEventPerRow,
  checkTerminalJustified,
  checkTransitionsAllowed,
} from './chaos/row-invariants';
import {
  checkDuplicateSends,
  checkNoOverlappingCalls,
  checkNoSuccessRecordedAsFailure,
  checkSentFromSuccess,
} from './chaos/unit-of-work-invariants';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/**
 * Every checker of the chaos run against crafted database states: a clean one
 * it must pass, and a violation it must report. The rows, the audit and the
 * ledger are written by hand (the audit trigger's own rows where a transaction
 * matters), on a real PostgreSQL with the chaos schema installed.
 */
describe('chaos invariants (crafted states, real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let client: Client;

  const I = 'chaos-worker-i1-g1';
  const J = 'chaos-worker-i2-g2';
  const T0 = Date.parse('2026-01-01T00:00:00.000Z');
  /** A database-clock instant `ms` after T0. */
  const at = (ms: number): Date => new Date(T0 + ms);
  const rowId = (n: number): string => seededUuid(7, n);

  beforeAll(async () => {
    ({ db, dataSource } = await createMigratedDatabase());
    client = new Client({ connectionString: db.url });
    await client.connect();
    await installChaosSchema(client);
  });

  afterAll(async () => {
    await client?.end();
    await dataSource?.destroy();
    await db?.drop();
  });

  beforeEach(async () => {
    await client.query(
      `TRUNCATE notifications, notification_outbox, distributed_locks, chaos_ledger, chaos_audit,
                chaos_lock_audit, chaos_outbox_audit RESTART IDENTITY`,
    );
  });

  async function row(
    n: number,
    fields: {
      channel?: string;
      status: 'Pending' | 'Sent' | 'Failed';
      attempts?: number;
      nextAttemptAt?: Date | null;
      code?: string | null;
    },
  ): Promise<string> {
    const id = rowId(n);
    await client.query(
      `INSERT INTO notifications (id, channel, recipient_address, body, status, attempts,
                                  next_attempt_at, last_error_code)
       VALUES ($1, $2, 'someone@example.org', 'hello', $3, $4, $5, $6)`,
      [
        id,
        fields.channel ?? 'email',
        fields.status,
        fields.attempts ?? 0,
        fields.nextAttemptAt ?? null,
        fields.code ?? null,
      ],
    );
    return id;
  }

  /** An audited write as the trigger would record it; by default under writer's own live lease (token 1). */
  async function write(
    id: string,
    writer: string,
    ms: number,
    change: {
      from: string;
      to: string;
      attempts?: [number, number];
      terminal?: boolean;
      code?: string | null;
      token?: number;
      owner?: string;
      leaseExpiresMs?: number;
      /** Written by the late-success statement (its tag in the statement's text). */
      lateSuccess?: boolean;
      /** The row was terminal Failed before the write (no next attempt). */
      fromTerminal?: boolean;
    },
  ): Promise<void> {
    const [oldAttempts, newAttempts] = change.attempts ?? [0, 1];
    const retryAt = change.to === 'Failed' && !change.terminal ? at(ms + 1_000) : null;
    await client.query(
      `INSERT INTO chaos_audit (op, notification_id, old_status, new_status, old_attempts,
          new_attempts, old_next_attempt_at, new_next_attempt_at, new_error_code, app_name,
          backend_pid, txid, lock_owner, lock_token, lock_expires_at, xact_at, at, late_success)
       VALUES ('UPDATE', $1, $2, $3, $4, $5, $6, $7, $8, $9, 4242, txid_current(), $10, $11, $12,
               $13, $13, $14)`,
      [
        id,
        change.from,
        change.to,
        oldAttempts,
        newAttempts,
        change.from === 'Failed' && !change.fromTerminal ? at(ms - 1_000) : null,
        retryAt,
        change.code ?? null,
        writer,
        change.owner ?? writer,
        change.token ?? 1,
        at(change.leaseExpiresMs ?? ms + 8_000),
        at(ms),
        change.lateSuccess ?? false,
      ],
    );
  }

  /** A provider call in the ledger: started at `startMs`, its outcome and (for late answers) its answer. */
  async function call(
    id: string,
    instance: string,
    startMs: number,
    outcome: {
      event: 'succeeded' | 'retriable' | 'non-retriable' | 'throttled' | 'hang' | null;
      atMs?: number;
      fault?: string;
      answeredMs?: number;
    },
  ): Promise<void> {
    const { rows } = await client.query<{ id: string; call_no: number }>(
      `INSERT INTO chaos_ledger (notification_id, call_no, instance, os_pid, event, attempts, at)
       VALUES ($1, (SELECT count(*) + 1 FROM chaos_ledger WHERE notification_id = $1 AND event = 'started'),
               $2, 1, 'started', 0, $3)
       RETURNING id::text, call_no`,
      [id, instance, at(startMs)],
    );
    const insert = (event: string, ms: number): Promise<unknown> =>
      client.query(
        `INSERT INTO chaos_ledger (call_id, notification_id, call_no, instance, os_pid, event, fault,
                                   provider_message_id, at)
         VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8)`,
        [
          rows[0].id,
          id,
          rows[0].call_no,
          instance,
          event,
          outcome.fault ?? (outcome.event === 'succeeded' ? 'success' : outcome.event),
          outcome.event === 'succeeded' ? `pm-${rows[0].call_no}` : null,
          at(ms),
        ],
      );
    if (outcome.event) await insert(outcome.event, outcome.atMs ?? startMs + 5);
    if (outcome.answeredMs !== undefined) await insert('answered', outcome.answeredMs);
  }

  function expectPass(result: InvariantResult): void {
    expect({ passed: result.passed, detail: result.detail }).toEqual({
      passed: true,
      detail: expect.any(String) as string,
    });
  }

  function expectViolation(result: InvariantResult, detail: RegExp, violations = 1): void {
    expect(result.passed).toBe(false);
    expect(result.violations).toBe(violations);
    expect(result.detail).toMatch(detail);
  }

  describe('checkEveryRowFinal', () => {
    it('passes when every seeded row is Sent or terminal', async () => {
      await row(1, { status: 'Sent', attempts: 1 });
      await row(2, { status: 'Failed', attempts: 4, nextAttemptAt: null });
      expectPass(await checkEveryRowFinal(client, { seededRows: 2, timedOut: false }));
    });

    it('fails on a row still due, a missing row and a run that hit its cap', async () => {
      await row(1, { status: 'Sent', attempts: 1 });
      await row(2, { status: 'Failed', attempts: 1, nextAttemptAt: at(5_000) });
      expectViolation(
        await checkEveryRowFinal(client, { seededRows: 3, timedOut: true }),
        /2 rows in the table, 3 seeded; 1 rows not final; the run hit its time cap/,
        3,
      );
    });
  });

  describe('checkOneEventPerRow', () => {
    /** The row's final write and its event (the row's next sequence), as the worker's statements write them. */
    async function finalWriteWithEvent(
      id: string,
      sameTransaction: boolean,
      final: { status: 'Sent' | 'Failed'; attempts?: number; sequence?: number } = {
        status: 'Sent',
      },
    ): Promise<void> {
      const attempts = final.attempts ?? 1;
      const event = (): Promise<unknown> =>
        client.query(
          `INSERT INTO notification_outbox (topic, message_key, contract_version, payload)
           VALUES ('notifications.dispatched', $1, 1,
                   jsonb_build_object('notificationId', $1::text, 'status', $2::text,
                                      'attempts', $3::int, 'sequence', $4::int))`,
          [id, final.status, attempts, final.sequence ?? 1],
        );
      await client.query('BEGIN');
      await client.query(
        `UPDATE notifications SET status = $2, attempts = $3, next_attempt_at = NULL,
                event_sequence = event_sequence + 1
          WHERE id = $1`,
        [id, final.status, attempts],
      );
      if (sameTransaction) await event();
      await client.query('COMMIT');
      if (!sameTransaction) await event();
    }

    it('passes when the event was written in the transaction of the final transition', async () => {
      await finalWriteWithEvent(await row(1, { status: 'Pending' }), true);
      expectPass(await checkOneEventPerRow(client));
    });

    it('passes for a terminal Failed (sequence 1) followed by a late success’s Sent (sequence 2)', async () => {
      const id = await row(1, { status: 'Failed', attempts: 3, nextAttemptAt: at(1_000) });
      await finalWriteWithEvent(id, true, { status: 'Failed', attempts: 4, sequence: 1 });
      await finalWriteWithEvent(id, true, { status: 'Sent', attempts: 4, sequence: 2 });
      expectPass(await checkOneEventPerRow(client));
    });

    it('fails on events out of sequence, a Sent followed by a Failed, and an event without a sequence', async () => {
      const skipped = await row(1, { status: 'Failed', attempts: 3, nextAttemptAt: at(1_000) });
      await finalWriteWithEvent(skipped, true, { status: 'Failed', attempts: 4, sequence: 1 });
      await finalWriteWithEvent(skipped, true, { status: 'Sent', attempts: 4, sequence: 3 });
      const reversed = await row(2, { status: 'Pending' });
      await finalWriteWithEvent(reversed, true, { status: 'Sent', sequence: 1 });
      await finalWriteWithEvent(reversed, true, { status: 'Failed', sequence: 2 });
      const unnumbered = await row(3, { status: 'Pending' });
      await finalWriteWithEvent(unnumbered, true);
      await client.query(
        `UPDATE notification_outbox SET payload = payload - 'sequence' WHERE message_key = $1`,
        [unnumbered],
      );
      const result = await checkOneEventPerRow(client);
      expectViolation(result, /sequences 1\.\.3 over 2 events/, 3);
      expect(result.detail).toContain(`${reversed}: 2 events (Sent,Failed by sequence)`);
      expect(result.detail).toContain(`${unnumbered}: 1 event(s) without a sequence`);
    });

    it('fails on an event written outside the final write, and on a row without one', async () => {
      await finalWriteWithEvent(await row(1, { status: 'Pending' }), false);
      const silent = await row(2, { status: 'Sent', attempts: 1 });
      const result = await checkOneEventPerRow(client);
      expectViolation(result, /event written outside any audited row write/, 2);
      expect(result.detail).toContain(`${silent}: no event`);
    });
  });

  describe('checkTransitionsAllowed', () => {
    it('passes for Failed→Sent with one more attempt', async () => {
      await write(rowId(1), I, 100, { from: 'Failed', to: 'Sent', attempts: [1, 2] });
      expectPass(await checkTransitionsAllowed(client));
    });

    it('passes for a late success that makes a terminal row Sent', async () => {
      await write(rowId(1), I, 100, {
        from: 'Failed',
        to: 'Sent',
        attempts: [4, 4],
        fromTerminal: true,
        lateSuccess: true,
      });
      expectPass(await checkTransitionsAllowed(client));
    });

    it('fails on a terminal row made Sent by anything but a late success', async () => {
      await write(rowId(1), I, 100, {
        from: 'Failed',
        to: 'Sent',
        attempts: [4, 5],
        fromTerminal: true,
      });
      expectViolation(
        await checkTransitionsAllowed(client),
        /terminal row written \(→ Sent, not by a late success\)/,
      );
    });

    it('fails when a Sent row is written again, or attempts jump', async () => {
      await write(rowId(1), I, 100, { from: 'Sent', to: 'Failed', attempts: [1, 2] });
      await write(rowId(2), I, 100, { from: 'Failed', to: 'Failed', attempts: [1, 3] });
      const result = await checkTransitionsAllowed(client);
      expectViolation(result, /Sent row written \(→ Failed\)/, 2);
      expect(result.detail).toContain('attempts jumped by 2');
    });
  });

  describe('checkTerminalJustified', () => {
    const context = { channels: CHAOS_CHANNELS, nonRetriableCodes: NON_RETRIABLE_CODES };

    it('passes for a non-retriable code, all attempts used, or exhausted at the maximum', async () => {
      await row(1, { status: 'Failed', attempts: 1, code: 'invalid_recipient' });
      await row(2, { status: 'Failed', attempts: 4, code: 'provider_timeout' });
      await row(3, { status: 'Failed', attempts: 4, code: 'max_attempts_exhausted' });
      await row(4, { status: 'Failed', attempts: 1, nextAttemptAt: at(9_000), code: 'http_503' });
      expectPass(await checkTerminalJustified(client, context));
    });

    it('fails for a retriable code before the last attempt, and exhaustion below the maximum', async () => {
      const early = await row(1, { status: 'Failed', attempts: 2, code: 'provider_timeout' });
      await row(2, { status: 'Failed', attempts: 1, code: 'max_attempts_exhausted' });
      const result = await checkTerminalJustified(client, context);
      expectViolation(result, /max_attempts_exhausted with 1 of 4 attempts used/, 2);
      expect(result.detail).toContain(
        `${early}: terminal with provider_timeout (not a non-retriable code) after 2 of 4 attempts`,
      );
    });
  });

  describe('checkNoCallAfterFinal', () => {
    it('passes when every call came before the final write of a Sent row', async () => {
      const id = await row(1, { status: 'Sent', attempts: 1 });
      await call(id, I, 0, { event: 'succeeded' });
      await write(id, I, 100, { from: 'Pending', to: 'Sent' });
      expectPass(await checkNoCallAfterFinal(client));
    });

    it('fails on a call after the final write', async () => {
      const id = await row(1, { status: 'Failed', attempts: 4, code: 'provider_timeout' });
      await call(id, I, 0, { event: 'retriable' });
      await write(id, I, 300, { from: 'Failed', to: 'Failed', attempts: [3, 4], terminal: true });
      await call(id, J, 900, { event: 'retriable' });
      expectViolation(
        await checkNoCallAfterFinal(client),
        /call 2 by chaos-worker-i2-g2 started 600 ms after the row became final/,
      );
    });
  });

  describe('checkDeliveredEndsSent', () => {
    it('passes when every row with a successful call is Sent, a late success after a terminal Failed included', async () => {
      const late = await row(1, { status: 'Sent', attempts: 4 });
      await call(late, I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 900,
      });
      await write(late, I, 700, { from: 'Failed', to: 'Failed', attempts: [3, 4] });
      await write(late, J, 800, { from: 'Failed', to: 'Failed', attempts: [4, 4], terminal: true });
      await write(late, I, 910, {
        from: 'Failed',
        to: 'Sent',
        attempts: [4, 4],
        fromTerminal: true,
        lateSuccess: true,
      });
      // Only failures: terminal Failed is its due end.
      const failed = await row(2, { status: 'Failed', attempts: 4, code: 'http_503' });
      await call(failed, I, 0, { event: 'retriable' });
      expectPass(await checkDeliveredEndsSent(client));
    });

    it('fails on a row whose call succeeded but that ended terminal Failed', async () => {
      // The provider accepted call 1 but answered past the margin; call 2, the last, failed.
      const id = await row(1, { status: 'Failed', attempts: 4, code: 'http_503' });
      await call(id, I, 0, { event: 'succeeded', fault: 'success-after-margin', answeredMs: 900 });
      await write(id, I, 700, { from: 'Failed', to: 'Failed', attempts: [3, 4] });
      await call(id, J, 750, { event: 'retriable' });
      await write(id, J, 800, { from: 'Failed', to: 'Failed', attempts: [4, 4], terminal: true });
      expectViolation(
        await checkDeliveredEndsSent(client),
        new RegExp(
          `${id}: ended terminal Failed although call 1 \\(success-after-margin\\) succeeded`,
        ),
      );
    });
  });

  describe('unitsOfWork', () => {
    it('pairs a call with its instance’s first write after the outcome and before its next call, however late', async () => {
      const id = rowId(1);
      await call(id, I, 0, { event: 'retriable' });
      await write(id, J, 50, { from: 'Failed', to: 'Failed', attempts: [1, 2] });
      // 30 s later: no time window, only the order decides.
      await write(id, I, 30_000, { from: 'Failed', to: 'Failed', attempts: [2, 3] });
      await call(id, I, 31_000, { event: 'succeeded' });
      await call(id, I, 32_000, { event: 'succeeded' });
      await write(id, I, 32_100, { from: 'Failed', to: 'Sent', attempts: [3, 4] });
      const history = await loadCallHistory(client);
      const units = unitsOfWork(history);
      const [first, second, third] = history.calls;
      expect(units.get(first.callId)).toMatchObject({ writer: I, newAttempts: 3 });
      expect(units.get(second.callId)).toBeNull();
      expect(units.get(third.callId)).toMatchObject({ writer: I, newStatus: 'Sent' });
    });

    it('never takes a write that records no call (exhausted, circuit open) as a call’s unit of work', async () => {
      const id = rowId(1);
      await call(id, I, 0, { event: 'succeeded' });
      await write(id, I, 500, {
        from: 'Failed',
        to: 'Failed',
        attempts: [4, 4],
        terminal: true,
        code: 'max_attempts_exhausted',
      });
      const history = await loadCallHistory(client);
      expect(unitsOfWork(history).get(history.calls[0].callId)).toBeNull();
    });
  });

  describe('checkNoSuccessRecordedAsFailure', () => {
    it('passes when a success wrote Sent, only a hold, or nothing', async () => {
      await call(rowId(1), I, 0, { event: 'succeeded', fault: 'late-success', answeredMs: 480 });
      await write(rowId(1), I, 490, { from: 'Pending', to: 'Sent' });
      await call(rowId(2), I, 0, { event: 'succeeded' });
      await write(rowId(2), I, 50, {
        from: 'Pending',
        to: 'Failed',
        code: 'outcome_not_recorded',
      });
      await call(rowId(3), I, 0, { event: 'succeeded' });
      await write(rowId(3), J, 50, { from: 'Pending', to: 'Failed', code: 'http_503' });
      expectPass(await checkNoSuccessRecordedAsFailure(client));
    });

    it('passes on a success answered only past the settle margin, written off as a timeout that did not end the row', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 1_100,
      });
      await write(rowId(1), I, 700, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      expectPass(await checkNoSuccessRecordedAsFailure(client));
    });

    it('passes on a success past the margin that never answered because its instance died after writing the attempt off', async () => {
      // The 'succeeded' event is the provider accepting the message; the answer never came back.
      await call(rowId(1), I, 0, { event: 'succeeded', fault: 'success-after-margin' });
      await write(rowId(1), I, 700, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      expectPass(await checkNoSuccessRecordedAsFailure(client));
    });

    it('passes on a success answered past every margin whose written-off attempt committed after the answer (group commit)', async () => {
      // The worker gave up at 300 + 400 ms; the answer came at 710 ms, the write committed at 760 ms.
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 710,
      });
      await write(rowId(1), I, 760, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      expectPass(await checkNoSuccessRecordedAsFailure(client));
    });

    it('passes on a success answered just after the timeout, written off at the timeout because the claim left no margin, that did not end the row', async () => {
      // The row waited in the queue: its claim left no settle margin (provider-caller.ts), so the
      // worker wrote the attempt off at 300 ms; the answer came 11 ms later, a late success.
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-abort',
        answeredMs: 311,
      });
      await write(rowId(1), I, 305, {
        from: 'Failed',
        to: 'Failed',
        attempts: [3, 3],
        code: 'provider_timeout',
      });
      expectPass(await checkNoSuccessRecordedAsFailure(client));
    });

    it('fails on a success whose attempt was written off before the shortest timeout, with the answer still to come', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-abort',
        answeredMs: 311,
      });
      await write(rowId(1), I, 120, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      expectViolation(
        await checkNoSuccessRecordedAsFailure(client),
        /call 1 by chaos-worker-i1-g1 \(success-after-abort\) succeeded, answered 311 ms after it started, but its unit of work wrote Pending→Failed/,
      );
    });

    it('fails on a success answered inside the margin whose attempt committed as a timeout after the answer', async () => {
      await call(rowId(1), I, 0, { event: 'succeeded', fault: 'late-success', answeredMs: 500 });
      await write(rowId(1), I, 560, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      expectViolation(
        await checkNoSuccessRecordedAsFailure(client),
        /call 1 by chaos-worker-i1-g1 \(late-success\) succeeded, answered 500 ms after it started, but its unit of work wrote Pending→Failed/,
      );
    });

    it('fails on a success answered past the margin whose written-off attempt ended the row terminal', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 1_100,
      });
      await write(rowId(1), I, 700, {
        from: 'Failed',
        to: 'Failed',
        attempts: [3, 4],
        terminal: true,
        code: 'provider_timeout',
      });
      expectViolation(
        await checkNoSuccessRecordedAsFailure(client),
        /call 1 by chaos-worker-i1-g1 \(success-after-margin\) succeeded, answered 1100 ms after it started, but its unit of work wrote Failed→terminal Failed/,
      );
    });

    it('fails on a late success whose unit of work committed the timeout as a failure', async () => {
      const id = rowId(1);
      // The adapter accepted at 5 ms and answered at 500 ms; the worker gave up at its 300 ms timeout.
      await call(id, I, 0, { event: 'succeeded', fault: 'late-success', answeredMs: 500 });
      await write(id, I, 300, {
        from: 'Failed',
        to: 'Failed',
        attempts: [3, 4],
        terminal: true,
        code: 'provider_timeout',
      });
      expectViolation(
        await checkNoSuccessRecordedAsFailure(client),
        new RegExp(
          `${id}: call 1 by ${I} \\(late-success\\) succeeded, answered 500 ms after it started, but its unit of work wrote Failed→terminal Failed \\(provider_timeout, attempts 4\\)`,
        ),
      );
    });
  });

  describe('checkSentFromSuccess', () => {
    it('passes when the Sent write follows a success of its writer', async () => {
      await call(rowId(1), I, 0, { event: 'retriable' });
      await write(rowId(1), I, 50, { from: 'Pending', to: 'Failed' });
      await call(rowId(1), J, 1_000, { event: 'succeeded', fault: 'deduplicated' });
      await write(rowId(1), J, 1_050, { from: 'Failed', to: 'Sent', attempts: [1, 2] });
      expectPass(await checkSentFromSuccess(client));
    });

    it('passes on a late-success Sent after its writer’s written-off call answered, whatever J did meanwhile', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 900,
      });
      await write(rowId(1), I, 700, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      await call(rowId(1), J, 750, { event: 'retriable' });
      await write(rowId(1), J, 800, {
        from: 'Failed',
        to: 'Failed',
        attempts: [1, 2],
        terminal: true,
      });
      await write(rowId(1), I, 910, {
        from: 'Failed',
        to: 'Sent',
        attempts: [2, 2],
        fromTerminal: true,
        lateSuccess: true,
      });
      const history = await loadCallHistory(client);
      expect(lateSuccessOwners(history).get(history.writes[2].seq)).toMatchObject({
        instance: I,
        callNo: 1,
      });
      // The late write is no call's unit of work: I's call's is the write-off.
      expect(unitsOfWork(history).get(history.calls[0].callId)).toMatchObject({ seq: 1 });
      expectPass(await checkSentFromSuccess(client));
    });

    it('fails on a late-success Sent with no success of its writer answered before it', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 900,
      });
      await write(rowId(1), I, 700, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      await write(rowId(1), I, 850, {
        from: 'Failed',
        to: 'Sent',
        attempts: [1, 1],
        lateSuccess: true,
      });
      expectViolation(
        await checkSentFromSuccess(client),
        new RegExp(
          `late-success Sent written by ${I} \\(audit #2\\) before any success of its had answered`,
        ),
      );
    });

    it('fails on a Sent write after a failed call, and one with no call of its writer', async () => {
      await call(rowId(1), I, 0, { event: 'retriable' });
      await write(rowId(1), I, 50, { from: 'Pending', to: 'Sent' });
      await call(rowId(2), I, 0, { event: 'succeeded' });
      await write(rowId(2), J, 50, { from: 'Pending', to: 'Sent' });
      const result = await checkSentFromSuccess(client);
      expectViolation(
        result,
        /Sent written for call 1 by chaos-worker-i1-g1 \(retriable\), which answered retriable/,
        2,
      );
      expect(result.detail).toContain(
        `${rowId(2)}: Sent written by ${J} (audit #2) without a call of its own`,
      );
    });
  });

  describe('checkDuplicateSends', () => {
    it('passes when the other success never committed or committed only a hold', async () => {
      // Row 1: I's success died with I; J sent it again. Row 2: I held its unrecorded success.
      await call(rowId(1), I, 0, { event: 'succeeded' });
      await call(rowId(1), J, 9_000, { event: 'succeeded', fault: 'deduplicated' });
      await write(rowId(1), J, 9_050, { from: 'Pending', to: 'Sent' });
      await call(rowId(2), I, 0, { event: 'succeeded' });
      await write(rowId(2), I, 40, { from: 'Pending', to: 'Failed', code: 'outcome_not_recorded' });
      await call(rowId(2), I, 2_000, { event: 'succeeded', fault: 'deduplicated' });
      await write(rowId(2), I, 2_050, { from: 'Failed', to: 'Sent', attempts: [1, 2] });
      // Row 3: I's call answered only past the settle margin; I had written the attempt off.
      await call(rowId(3), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 1_100,
      });
      await write(rowId(3), I, 700, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      await call(rowId(3), I, 2_000, { event: 'succeeded', fault: 'deduplicated' });
      await write(rowId(3), I, 2_050, { from: 'Failed', to: 'Sent', attempts: [1, 2] });
      const { result, figures } = await checkDuplicateSends(client);
      expectPass(result);
      expect(figures).toEqual({ rows: 3, uncommitted: 1, held: 1, tooLate: 1 });
    });

    it('passes when a late success was recorded and the other success, its claim cleared by it, wrote nothing', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-margin',
        answeredMs: 900,
      });
      await write(rowId(1), I, 700, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      await call(rowId(1), J, 750, { event: 'succeeded', fault: 'deduplicated' });
      await write(rowId(1), I, 910, {
        from: 'Failed',
        to: 'Sent',
        attempts: [1, 1],
        lateSuccess: true,
      });
      const { result, figures } = await checkDuplicateSends(client);
      expectPass(result);
      expect(figures).toEqual({ rows: 1, uncommitted: 1, held: 0, tooLate: 0 });
    });

    it('fails when the first success’s unit of work committed a retry before the timeout, the second one sending it again', async () => {
      await call(rowId(1), I, 0, {
        event: 'succeeded',
        fault: 'success-after-abort',
        answeredMs: 320,
      });
      await write(rowId(1), I, 120, { from: 'Pending', to: 'Failed', code: 'provider_timeout' });
      await call(rowId(1), I, 1_500, { event: 'succeeded', fault: 'deduplicated' });
      await write(rowId(1), I, 1_550, { from: 'Failed', to: 'Sent', attempts: [1, 2] });
      const { result, figures } = await checkDuplicateSends(client);
      expectViolation(
        result,
        /call 1 by chaos-worker-i1-g1 \(success-after-abort\) succeeded besides the one that wrote Sent, and its unit of work committed Pending→Failed \(provider_timeout, attempts 1\)/,
      );
      expect(figures.rows).toBe(1);
    });

    it('fails when none of the successes wrote Sent', async () => {
      await call(rowId(1), I, 0, { event: 'succeeded' });
      await call(rowId(1), J, 9_000, { event: 'succeeded' });
      expectViolation(
        (await checkDuplicateSends(client)).result,
        /2 successful calls, 0 of them with a unit of work that wrote Sent/,
      );
    });
  });

  describe('checkNoOverlappingCalls', () => {
    it('passes when an instance calls again only after its previous call answered; other instances may overlap', async () => {
      await call(rowId(1), I, 0, { event: 'succeeded', fault: 'late-success', answeredMs: 550 });
      await call(rowId(1), J, 400, { event: 'succeeded', fault: 'deduplicated' });
      await call(rowId(1), I, 600, { event: 'succeeded', fault: 'deduplicated' });
      expectPass(await checkNoOverlappingCalls(client));
    });

    it('fails when an instance starts a call while its previous one for the row is still out', async () => {
      await call(rowId(1), I, 0, { event: 'succeeded', fault: 'late-success', answeredMs: 550 });
      await call(rowId(1), I, 400, { event: 'succeeded', fault: 'deduplicated' });
      expectViolation(
        await checkNoOverlappingCalls(client),
        /call 2 by chaos-worker-i1-g1 \(deduplicated\) started 150 ms before call 1 by chaos-worker-i1-g1 \(late-success\) answered/,
      );
    });

    it('fails when an instance calls again while its previous call for the row never answered', async () => {
      await call(rowId(1), I, 0, { event: null, fault: 'hang-forever' });
      await call(rowId(1), I, 9_000, { event: 'succeeded' });
      expectViolation(
        await checkNoOverlappingCalls(client),
        /call 2 by chaos-worker-i1-g1 \(success\) started while call 1 by chaos-worker-i1-g1 never answered/,
      );
    });
  });

  describe('checkLeaseOwnership', () => {
    async function leaseChange(
      op: 'INSERT' | 'UPDATE',
      owner: string,
      token: number,
      acquiredMs: number,
      previous?: { owner: string; token: number; expiresMs: number },
    ): Promise<void> {
      await client.query(
        `INSERT INTO chaos_lock_audit (op, old_owner, new_owner, old_token, new_token,
            old_expires_at, new_acquired_at, new_expires_at, app_name)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $3)`,
        [
          op,
          previous?.owner ?? null,
          owner,
          previous?.token ?? null,
          token,
          previous ? at(previous.expiresMs) : null,
          at(acquiredMs),
          at(acquiredMs + 8_000),
        ],
      );
    }

    it('passes for writes under the writer’s live lease and takeovers after expiry', async () => {
      await leaseChange('INSERT', I, 1, 0);
      await write(rowId(1), I, 100, { from: 'Pending', to: 'Sent', token: 1 });
      await leaseChange('UPDATE', J, 2, 8_500, { owner: I, token: 1, expiresMs: 8_000 });
      await write(rowId(2), J, 8_600, { from: 'Pending', to: 'Sent', token: 2 });
      expectPass((await checkLeaseOwnership(client)).result);
    });

    it('passes for a late-success write under another owner’s lease: no lease fences it', async () => {
      await leaseChange('INSERT', J, 1, 0);
      await write(rowId(1), I, 100, {
        from: 'Failed',
        to: 'Sent',
        attempts: [1, 1],
        token: 1,
        owner: J,
        lateSuccess: true,
      });
      const result = (await checkLeaseOwnership(client)).result;
      expectPass(result);
      expect(result.detail).toContain('but 1 late successes');
    });

    it('fails on a write under another owner’s lease, after expiry, and a takeover of a live lease', async () => {
      await leaseChange('INSERT', I, 1, 0);
      await leaseChange('UPDATE', J, 2, 5_000, { owner: I, token: 1, expiresMs: 8_000 });
      await write(rowId(1), I, 5_100, { from: 'Pending', to: 'Sent', token: 2, owner: J });
      await write(rowId(2), J, 14_000, {
        from: 'Pending',
        to: 'Sent',
        token: 2,
        leaseExpiresMs: 13_000,
      });
      const result = (await checkLeaseOwnership(client)).result;
      expectViolation(
        result,
        /written by chaos-worker-i1-g1 while chaos-worker-i2-g2 \(token 2\) held the lease/,
        3,
      );
      expect(result.detail).toContain('1000 ms after its lease (token 2) expired');
      expect(result.detail).toContain('token 2 acquired 3000 ms before token 1 expired');
    });
  });

  describe('checkFencingOrder', () => {
    it('passes when writes come in token order', async () => {
      await write(rowId(1), I, 100, { from: 'Pending', to: 'Sent', token: 5 });
      await write(rowId(2), I, 200, { from: 'Pending', to: 'Sent', token: 5 });
      await write(rowId(3), J, 300, { from: 'Pending', to: 'Sent', token: 6 });
      expectPass(await checkFencingOrder(client));
    });

    it('fails on a write under a lower token after a higher token wrote', async () => {
      await write(rowId(1), I, 100, { from: 'Pending', to: 'Sent', token: 5 });
      await write(rowId(2), J, 200, { from: 'Pending', to: 'Sent', token: 6 });
      await write(rowId(3), I, 300, { from: 'Pending', to: 'Failed', token: 5 });
      expectViolation(
        await checkFencingOrder(client),
        new RegExp(
          `${rowId(3)}: written by ${I} under token 5 \\(audit #3\\) after token 6 had written \\(audit #2\\)`,
        ),
      );
    });
  });

  describe('checkProcessExits', () => {
    const sigterm = { instanceId: I, midCycle: true, signal: null, exitMs: 80, final: false };

    it('passes when every SIGTERM exited 0 and nothing exited unasked', () => {
      expectPass(checkProcessExits({ sigterms: [{ ...sigterm, code: 0 }], unexpectedExits: [] }));
    });

    it('fails on a SIGTERM exit code 1 and an instance that exited on its own', () => {
      const result = checkProcessExits({
        sigterms: [{ ...sigterm, code: 1 }],
        unexpectedExits: [
          {
            instanceId: J,
            code: 1,
            signal: null,
            lastError: 'Error: Connection terminated unexpectedly',
          },
        ],
      });
      expectViolation(result, /chaos-worker-i1-g1 \(chaos SIGTERM\) exited with code 1/, 2);
      expect(result.detail).toContain(
        `${J} exited on its own (code 1, signal null): Error: Connection terminated unexpectedly`,
      );
    });
  });
});
