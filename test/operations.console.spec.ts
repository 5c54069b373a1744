import type { DataSource } from 'typeorm';
import {
  DISCARD_ERROR_CODE,
  InvalidOperationInputError,
  NotificationBrowser,
  NotificationDiscard,
  NOTIFICATION_DISPATCHED_TOPIC,
  type NotificationListQuery,
  type NotificationListState,
} from '@pin/notifications-retry';
import { eventSequence, outboxEvents, readNotification } from './support/fixtures';
import { insertStateRows, secondsFromNow } from './support/console-fixtures';
import { operatorActions } from './support/operations-fixtures';
import { useRetryTestApp } from './support/retry-test-app';

const operator = { actor: 'ops:test', reason: 'recalled statement batch' };

/** Every page of a list, following `next`; the ids in the order they came. */
async function allPages(
  browser: NotificationBrowser,
  query: NotificationListQuery,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await browser.list({ ...query, ...(after ? { after } : {}) });
    pages++;
    ids.push(...page.rows.map((row) => row.id));
    if (page.next === null) return { ids, pages };
    after = page.next;
    if (pages > 50) throw new Error('the cursor never ends');
  }
}

describe('operations for the console: browser and discard (real PostgreSQL)', () => {
  const t = useRetryTestApp({ channels: [{ key: 'email' }, { key: 'sms' }] });
  let ds: DataSource;
  let browser: NotificationBrowser;
  let discard: NotificationDiscard;

  beforeAll(() => {
    ds = t.ds;
    browser = t.app.module.get(NotificationBrowser);
    discard = t.app.module.get(NotificationDiscard);
  });

  /** One row set of every state, `count` rows each, all rows of a state with equal timestamps. */
  async function everyState(count: number): Promise<Record<NotificationListState, string[]>> {
    const past = secondsFromNow(-600);
    return {
      due: await insertStateRows(ds, count, { status: 'Failed', nextAttemptAt: past }),
      deferred: await insertStateRows(ds, count, {
        status: 'Pending',
        scheduledAt: secondsFromNow(3600),
      }),
      claimed: await insertStateRows(ds, count, {
        status: 'Failed',
        nextAttemptAt: past,
        claimedUntil: secondsFromNow(300),
      }),
      retrying: await insertStateRows(ds, count, {
        status: 'Failed',
        nextAttemptAt: secondsFromNow(1800),
        errorCode: 'provider_unavailable',
      }),
      terminal: await insertStateRows(ds, count, {
        status: 'Failed',
        updatedAt: past,
        errorCode: 'template_revoked',
      }),
      sent: await insertStateRows(ds, count, { status: 'Sent', updatedAt: past }),
    };
  }

  describe('list', () => {
    it.each(['due', 'deferred', 'claimed', 'retrying', 'terminal', 'sent'] as const)(
      'pages the %s rows by keyset: equal timestamps, no row twice, none missed, a stable order',
      async (state) => {
        const rows = await everyState(7);
        const first = await allPages(browser, { state, limit: 3 });
        expect(first.pages).toBe(3);
        expect(first.ids).toHaveLength(7);
        expect(new Set(first.ids)).toEqual(new Set(rows[state]));
        const descending = state === 'terminal' || state === 'sent';
        const byId = [...rows[state]].sort();
        expect(first.ids).toEqual(descending ? byId.reverse() : byId);
        expect((await allPages(browser, { state, limit: 3 })).ids).toEqual(first.ids);
      },
    );

    it('masks the address and shows no subject or body; a claimed row says until when', async () => {
      const [id] = await insertStateRows(ds, 1, {
        status: 'Failed',
        nextAttemptAt: secondsFromNow(-60),
        claimedUntil: secondsFromNow(300),
        address: 'jane.secret@example.com',
      });
      const page = await browser.list({ state: 'claimed' });
      expect(page.rows).toHaveLength(1);
      expect(page.rows[0]).toMatchObject({ id, maskedAddress: 'j***@***.com', status: 'Failed' });
      expect(page.rows[0].claimedUntil).toBeInstanceOf(Date);
      const text = JSON.stringify(page);
      expect(text).not.toContain('jane.secret');
      expect(text).not.toContain('Your statement');
      expect(text).not.toContain('Hello');
    });

    it('filters by channel, error code, since and id', async () => {
      const email = await insertStateRows(ds, 2, { status: 'Failed', errorCode: 'bounced' });
      const sms = await insertStateRows(ds, 1, {
        status: 'Failed',
        channel: 'sms',
        errorCode: 'bounced',
        updatedAt: secondsFromNow(-7200),
      });
      await insertStateRows(ds, 1, { status: 'Failed', errorCode: 'template_revoked' });
      const ids = async (query: Omit<NotificationListQuery, 'state'>) =>
        (await browser.list({ state: 'terminal', ...query })).rows.map((row) => row.id).sort();
      expect(await ids({ channel: 'sms' })).toEqual(sms);
      expect(await ids({ errorCode: 'bounced' })).toEqual([...email, ...sms].sort());
      expect(await ids({ errorCode: 'bounced', since: secondsFromNow(-3600) })).toEqual(
        [...email].sort(),
      );
      expect(await ids({ id: email[0] })).toEqual([email[0]]);
      expect(await ids({ id: email[0].toUpperCase() })).toEqual([email[0]]);
      // An id searched in the wrong state finds nothing there.
      expect((await browser.list({ state: 'sent', id: email[0] })).rows).toEqual([]);
    });

    it('refuses a bad cursor, state, limit or filter, naming the option and the value', async () => {
      const refused = async (query: unknown, option: string, value?: string) => {
        const error = await browser.list(query as NotificationListQuery).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidOperationInputError);
        expect((error as InvalidOperationInputError).option).toBe(option);
        if (value !== undefined) expect((error as Error).message).toContain(value);
      };
      await refused({ state: 'due', after: 'not-a-cursor' }, 'after', 'not-a-cursor');
      await refused({ state: 'due', after: Buffer.from('[1,2]').toString('base64url') }, 'after');
      await insertStateRows(ds, 2, { status: 'Sent' });
      const sentCursor = (await browser.list({ state: 'sent', limit: 1 })).next!;
      expect(sentCursor).toEqual(expect.any(String));
      await refused({ state: 'due', after: sentCursor }, 'after', 'another list');
      await refused({ state: 'stuck' }, 'state', 'stuck');
      await refused({}, 'state');
      await refused({ state: 'due', limit: 0 }, 'limit', '0');
      await refused({ state: 'due', limit: 201 }, 'limit', '201');
      await refused({ state: 'due', limit: 2.5 }, 'limit', '2.5');
      await refused({ state: 'due', id: 'abc' }, 'id', 'abc');
      await refused({ state: 'due', channel: '  ' }, 'channel');
      await refused({ state: 'due', since: new Date('nope') }, 'since');
    });
  });

  it('counts each state per channel, Sent only over the last hour', async () => {
    await everyState(2);
    await insertStateRows(ds, 3, {
      status: 'Failed',
      channel: 'sms',
      nextAttemptAt: secondsFromNow(-5),
    });
    await insertStateRows(ds, 4, {
      status: 'Sent',
      channel: 'sms',
      updatedAt: secondsFromNow(-7200),
    });
    await insertStateRows(ds, 1, { status: 'Sent', channel: 'sms' });
    expect(await browser.counts()).toEqual([
      {
        channel: 'email',
        due: 2,
        deferred: 2,
        claimed: 2,
        retrying: 2,
        terminal: 2,
        sentLastHour: 2,
      },
      {
        channel: 'sms',
        due: 3,
        deferred: 0,
        claimed: 0,
        retrying: 0,
        terminal: 0,
        sentLastHour: 1,
      },
    ]);
  });

  describe('get', () => {
    it('returns the detail with its attempt history, newest last, masked and redacted', async () => {
      const history = [
        {
          attempt: 1,
          at: '2026-12-01T10:00:00.000Z',
          outcome: 'retry',
          errorCode: 'timeout',
          httpStatus: null,
          error: 'timed out',
          latencyMs: 2000,
        },
        {
          attempt: 2,
          at: '2026-12-01T10:05:00.000Z',
          outcome: 'terminal',
          errorCode: 'bounced',
          httpStatus: 550,
          error: 'mailbox jane.secret@example.com unknown',
          latencyMs: 120,
        },
      ];
      const [id] = await insertStateRows(ds, 1, {
        status: 'Failed',
        attempts: 2,
        errorCode: 'bounced',
        errorMessage: 'mailbox jane.secret@example.com unknown',
        address: 'jane.secret@example.com',
        attemptHistory: history,
      });
      const detail = await browser.get(id);
      expect(detail).toMatchObject({
        id,
        channel: 'email',
        status: 'Failed',
        attempts: 2,
        errorCode: 'bounced',
        maskedAddress: 'j***@***.com',
        eventSequence: 0,
        nextAttemptAt: null,
        claimedUntil: null,
      });
      expect(detail!.history.map((entry) => entry.attempt)).toEqual([1, 2]);
      expect(detail!.history[0]).toEqual(history[0]);
      expect(detail!.history[1]).toMatchObject({
        outcome: 'terminal',
        httpStatus: 550,
        latencyMs: 120,
      });
      const text = JSON.stringify(detail);
      expect(text).not.toContain('jane.secret');
      expect(text).not.toContain('Your statement');
      expect(text).not.toContain('Hello');
    });

    it("reads a history another writer left: '[]', not an array, odd entries", async () => {
      const [empty] = await insertStateRows(ds, 1, { status: 'Sent' });
      const [odd] = await insertStateRows(ds, 1, {
        status: 'Sent',
        attemptHistory: { not: 'an array' },
      });
      const [mixed] = await insertStateRows(ds, 1, {
        status: 'Sent',
        attemptHistory: [42, null, { attempt: 'one', outcome: 7, latencyMs: 'fast' }],
      });
      expect((await browser.get(empty))!.history).toEqual([]);
      expect((await browser.get(odd))!.history).toEqual([]);
      expect((await browser.get(mixed))!.history).toEqual([
        {
          attempt: 0,
          at: '',
          outcome: 'unknown',
          errorCode: null,
          httpStatus: null,
          error: null,
          latencyMs: null,
        },
      ]);
    });

    it('shows a provider message id that echoes the row (written by another writer) as [redacted], a plain one as it is', async () => {
      const [echoing, plain] = await insertStateRows(ds, 2, {
        status: 'Sent',
        attempts: 1,
        address: 'jane.secret@example.com',
      });
      await ds.query(`UPDATE notifications SET provider_message_id = $2 WHERE id = $1`, [
        echoing,
        'msg-for-jane.secret@example.com',
      ]);
      await ds.query(`UPDATE notifications SET provider_message_id = 'msg-0042' WHERE id = $1`, [
        plain,
      ]);
      expect((await browser.get(echoing))!.providerMessageId).toBe('[redacted]');
      expect((await browser.get(plain))!.providerMessageId).toBe('msg-0042');
    });

    it('returns null for an unknown id and refuses one that is not a UUID', async () => {
      expect(await browser.get('00000000-0000-4000-8000-000000000000')).toBeNull();
      await expect(browser.get('nope')).rejects.toMatchObject({ option: 'id' });
    });
  });

  describe('discard', () => {
    it('turns due, deferred and retrying rows terminal with one Failed event each, the next sequence, audited; the preview counted the same', async () => {
      const due = await insertStateRows(ds, 2, {
        status: 'Failed',
        attempts: 2,
        nextAttemptAt: secondsFromNow(-60),
      });
      const deferred = await insertStateRows(ds, 1, {
        status: 'Pending',
        attempts: 0,
        scheduledAt: secondsFromNow(600),
      });
      const retrying = await insertStateRows(ds, 1, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: secondsFromNow(600),
        errorCode: 'timeout',
        errorMessage: 'timed out',
      });
      await ds.query(`UPDATE notifications SET event_sequence = 4 WHERE id = $1`, [retrying[0]]);
      const untouched = [
        ...(await insertStateRows(ds, 1, {
          status: 'Failed',
          nextAttemptAt: secondsFromNow(-60),
          claimedUntil: secondsFromNow(300),
        })),
        ...(await insertStateRows(ds, 1, { status: 'Sent' })),
        ...(await insertStateRows(ds, 1, { status: 'Failed', errorCode: 'template_revoked' })),
        ...(await insertStateRows(ds, 1, { status: 'Pending' })),
        ...(await insertStateRows(ds, 1, {
          status: 'Failed',
          channel: 'sms',
          nextAttemptAt: secondsFromNow(-60),
        })),
      ];
      const before = await ds.query(`SELECT * FROM notifications WHERE id = ANY($1) ORDER BY id`, [
        untouched,
      ]);

      const preview = await discard.preview({ channel: 'email' });
      expect(preview).toEqual({ rows: 4 });
      const result = await discard.discard({ channel: 'email' }, operator);
      expect(result.rows).toBe(preview.rows);

      for (const id of [...due, ...deferred, ...retrying]) {
        const row = await readNotification(ds, id);
        expect(row).toMatchObject({
          status: 'Failed',
          next_attempt_at: null,
          last_error_code: DISCARD_ERROR_CODE,
          claim_token: null,
          due_at: null,
        });
        const events = await outboxEvents(ds, id);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({
          topic: NOTIFICATION_DISPATCHED_TOPIC,
          message_key: id,
          contract_version: 1,
        });
        const attempts = due.includes(id) ? 2 : deferred.includes(id) ? 0 : 1;
        expect(events[0].payload).toEqual({
          notificationId: id,
          tenantId: null,
          channel: 'email',
          status: 'Failed',
          attempts,
          providerKey: 'scripted',
          providerMessageId: null,
          errorCode: DISCARD_ERROR_CODE,
          occurredAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          sequence: await eventSequence(ds, id),
        });
        expect(events[0].headers).toEqual({
          correlationId: result.actionId,
          jobRunId: result.actionId,
        });
      }
      expect(await eventSequence(ds, due[0])).toBe(1);
      expect(await eventSequence(ds, retrying[0])).toBe(5);
      expect(
        await ds.query(`SELECT * FROM notifications WHERE id = ANY($1) ORDER BY id`, [untouched]),
      ).toEqual(before);
      expect(
        await ds.query(`SELECT 1 FROM notification_outbox WHERE message_key = ANY($1)`, [
          untouched,
        ]),
      ).toEqual([]);

      expect(await operatorActions(ds)).toEqual([
        {
          action: 'discard',
          actor: operator.actor,
          reason: operator.reason,
          filter: { channel: 'email' },
          rows: 4,
        },
      ]);
      const audited = await ds.query<
        Array<{ notification_id: string; previous_status: string; scheduled: boolean }>
      >(
        `SELECT notification_id, previous_status, previous_attempts, previous_error_code, previous_scheduled_at IS NOT NULL AS scheduled
           FROM notification_operator_action_rows WHERE action_id = $1 ORDER BY notification_id`,
        [result.actionId],
      );
      expect(audited).toHaveLength(4);
      expect(audited.find((row) => row.notification_id === retrying[0])).toEqual({
        notification_id: retrying[0],
        previous_status: 'Failed',
        previous_attempts: 1,
        previous_error_code: 'timeout',
        scheduled: false,
      });
      expect(audited.find((row) => row.notification_id === deferred[0])).toMatchObject({
        previous_status: 'Pending',
        scheduled: true,
      });
      // Discarded rows are terminal: a second discard finds nothing.
      expect(await discard.preview({ channel: 'email' })).toEqual({ rows: 0 });
    });

    it('narrows by ids and state', async () => {
      const due = await insertStateRows(ds, 2, {
        status: 'Failed',
        nextAttemptAt: secondsFromNow(-60),
      });
      const retrying = await insertStateRows(ds, 2, {
        status: 'Failed',
        nextAttemptAt: secondsFromNow(600),
      });
      expect(await discard.preview({ channel: 'email', state: 'retrying' })).toEqual({ rows: 2 });
      expect(await discard.preview({ ids: [due[0], retrying[0]], state: 'due' })).toEqual({
        rows: 1,
      });
      const result = await discard.discard({ ids: [due[0], retrying[0]], state: 'due' }, operator);
      expect(result.rows).toBe(1);
      expect((await readNotification(ds, due[0])).last_error_code).toBe(DISCARD_ERROR_CODE);
      expect((await readNotification(ds, retrying[0])).next_attempt_at).not.toBeNull();
    });

    it('skips a row another transaction holds locked', async () => {
      const [locked, free] = await insertStateRows(ds, 2, {
        status: 'Failed',
        nextAttemptAt: secondsFromNow(-60),
      });
      const runner = ds.createQueryRunner();
      await runner.startTransaction();
      try {
        await runner.query(`SELECT 1 FROM notifications WHERE id = $1 FOR UPDATE`, [locked]);
        expect((await discard.discard({ ids: [locked, free] }, operator)).rows).toBe(1);
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
      expect((await readNotification(ds, locked)).next_attempt_at).not.toBeNull();
      expect((await readNotification(ds, free)).next_attempt_at).toBeNull();
    });

    it('requires a reason and ids or a channel, and changes nothing without them', async () => {
      const [id] = await insertStateRows(ds, 1, {
        status: 'Failed',
        nextAttemptAt: secondsFromNow(-60),
      });
      await expect(
        discard.discard({ ids: [id] }, { actor: 'ops:test', reason: ' ' }),
      ).rejects.toMatchObject({ option: 'reason' });
      await expect(discard.discard({ errorCode: 'timeout' }, operator)).rejects.toMatchObject({
        option: 'filter',
      });
      await expect(discard.preview({ state: 'due' })).rejects.toMatchObject({ option: 'filter' });
      await expect(discard.preview({ ids: ['x'] })).rejects.toMatchObject({ option: 'ids' });
      await expect(
        discard.preview({ channel: 'email', state: 'sent' as never }),
      ).rejects.toMatchObject({ option: 'state' });
      expect((await readNotification(ds, id)).next_attempt_at).not.toBeNull();
      expect(await operatorActions(ds)).toEqual([]);
    });
  });
});
