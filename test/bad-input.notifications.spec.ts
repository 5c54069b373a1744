import type { DataSource } from 'typeorm';
import { NonRetriableDeliveryError } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

/** The driver's error under TypeORM's QueryFailedError: SQLSTATE, constraint, column. */
interface DriverError {
  readonly code?: string;
  readonly constraint?: string;
  readonly column?: string;
  readonly message: string;
}

async function rejection(work: Promise<unknown>): Promise<DriverError> {
  try {
    await work;
  } catch (error) {
    return ((error as { driverError?: DriverError }).driverError ?? error) as DriverError;
  }
  throw new Error('the database accepted a row it should have refused');
}

const TEN_MB = 10 * 1024 * 1024;

/**
 * Bad `notifications` rows, as another module of the monolith (or an operator
 * with psql) could write them. Where the schema refuses a row, the test names
 * the constraint; where it accepts one, the worker must cope with it and carry
 * on with the rest.
 */
describe('bad input: notifications rows (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    options: { concurrency: 2 },
    channels: [{ key: 'email', maxAttempts: 3 }],
  });
  let app: RetryTestApp;
  let ds: DataSource;

  beforeAll(() => {
    ({ app, ds } = t);
  });

  beforeEach(() => {
    app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
  });

  /** A due, ordinary row: proof that the worker carried on with the rest. */
  const ordinaryRow = (): Promise<string> =>
    insertNotification(ds, { status: 'Failed', nextAttemptAt: minutesAgo(app.clock.now(), 1) });

  async function expectOrdinaryRowSent(id: string): Promise<void> {
    expect((await readNotification(ds, id)).status).toBe('Sent');
    expect(await outboxEvents(ds, id)).toHaveLength(1);
  }

  it.each([
    ['an unknown status', 'notifications_status_check', { status: 'Sending' }],
    ['a lower-case status', 'notifications_status_check', { status: 'failed' }],
    ['negative attempts', 'notifications_attempts_check', { status: 'Failed', attempts: -1 }],
  ])('refuses a row with %s by the %s constraint', async (_label, constraint, row) => {
    const error = await rejection(
      insertNotification(ds, {
        nextAttemptAt: minutesAgo(app.clock.now(), 1),
        ...(row as { status: 'Failed' }),
      }),
    );
    expect(error.code).toBe('23514'); // check_violation
    expect(error.constraint).toBe(constraint);

    const ordinary = await ordinaryRow();
    completed(await app.cycles.runCycle());
    await expectOrdinaryRowSent(ordinary);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM notifications`);
    expect(n).toBe(1);
  });

  it.each([
    ['a null channel', 'channel'],
    ['a missing recipient address', 'recipient_address'],
    ['a null body', 'body'],
    ['a null status', 'status'],
  ])('refuses a row with %s (NOT NULL on %s)', async (_label, column) => {
    const error = await rejection(
      ds.query(
        `INSERT INTO notifications (channel, recipient_address, body, status, next_attempt_at)
         VALUES ($1, $2, $3, $4, now())`,
        ['email', 'a@example.com', 'hello', 'Failed'].map((value, i) =>
          ['channel', 'recipient_address', 'body', 'status'][i] === column ? null : value,
        ),
      ),
    );
    expect(error.code).toBe('23502'); // not_null_violation
    expect(error.column).toBe(column);
  });

  it('refuses a NUL character in the body (PostgreSQL text cannot hold it)', async () => {
    const error = await rejection(
      insertNotification(ds, {
        status: 'Failed',
        nextAttemptAt: minutesAgo(app.clock.now(), 1),
        body: 'before\u0000after',
      }),
    );
    expect(error.code).toBe('22021'); // character_not_in_repertoire
    expect(error.message).toMatch(/0x00/);
  });

  it.each([
    ['next_attempt_at', 'Failed'],
    ['scheduled_at', 'Pending'],
  ])(
    "refuses '-infinity' in %s (notifications_*_finite): it would break every cycle's ordering",
    async (column, status) => {
      const error = await rejection(
        ds.query(
          `INSERT INTO notifications (channel, recipient_address, body, status, ${column})
           VALUES ('email', 'a@example.com', 'hello', $1, '-infinity')`,
          [status],
        ),
      );
      expect(error.code).toBe('23514'); // check_violation
      expect(error.constraint).toBe(`notifications_${column}_finite`);
    },
  );

  it('leaves a row of an unknown channel untouched and logs it in channels-excluded, sending the rest', async () => {
    const now = app.clock.now();
    const stray = await insertNotification(ds, {
      channel: 'carrier-pigeon',
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 5),
    });
    const before = await readNotification(ds, stray);
    const ordinary = await ordinaryRow();

    const report = completed(await app.cycles.runCycle());

    expect(report.excludedChannels).toEqual([
      { channel: 'carrier-pigeon', reason: 'not-configured', dueRows: 1 },
    ]);
    expect(app.logs.events('channels-excluded')).toEqual([
      expect.objectContaining({
        misconfigured: 1,
        sample: [{ channel: 'carrier-pigeon', reason: 'not-configured', dueRows: 1 }],
      }),
    ]);
    // Recoverable: exactly as it was, still due once someone configures the channel.
    expect(await readNotification(ds, stray)).toEqual(before);
    await expectOrdinaryRowSent(ordinary);

    await insertChannel(ds, { key: 'carrier-pigeon' });
    completed(await app.cycles.runCycle());
    expect((await readNotification(ds, stray)).status).toBe('Sent');
  });

  it('sends an empty recipient address to the adapter, whose rejection ends the row terminally with an event', async () => {
    const blank = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 2),
      recipientAddress: '',
    });
    const ordinary = await ordinaryRow();
    app.provider.respondWith((message) => {
      if (message.recipientAddress === '') throw new NonRetriableDeliveryError('invalid_address');
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, terminal: 1, errors: 0 });
    expect(await readNotification(ds, blank)).toMatchObject({
      status: 'Failed',
      next_attempt_at: null,
      last_error_code: 'invalid_address',
    });
    expect(app.logs.events('item-failed-terminal')).toEqual([
      expect.objectContaining({ notificationId: blank, errorCode: 'invalid_address' }),
    ]);
    expect((await outboxEvents(ds, blank)).map((e) => e.payload.status)).toEqual(['Failed']);
    await expectOrdinaryRowSent(ordinary);
  });

  it('delivers a 10 MB body whole, keeps it out of the logs, and bounds an error text that echoes it', async () => {
    const body = 'x'.repeat(TEN_MB - 20) + ' end-of-body-marker';
    const big = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 2),
      body,
    });
    const ordinary = await ordinaryRow();
    let received = '';
    app.provider.respondWith((message) => {
      if (message.id === big) {
        received = message.body;
        throw new NonRetriableDeliveryError('payload_too_large', `rejected: ${message.body}`);
      }
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, terminal: 1, errors: 0 });
    expect(received.length).toBe(body.length);
    expect(received === body).toBe(true);
    const row = await readNotification(ds, big);
    expect(row).toMatchObject({ status: 'Failed', last_error_code: 'payload_too_large' });
    expect(row.last_error_message!.length).toBeLessThanOrEqual(501);
    expect(row.last_error_message).not.toContain('xxxxxxxx');
    const logs = JSON.stringify(app.logs.entries);
    expect(logs.length).toBeLessThan(100_000);
    expect(logs).not.toContain('end-of-body-marker');
    await expectOrdinaryRowSent(ordinary);
  });

  it('stores lone surrogates as U+FFFD (the driver encodes UTF-8) and delivers the row', async () => {
    const id = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
      subject: 'half a pair \uD83D here',
      body: 'trailing low \uDE00',
    });

    completed(await app.cycles.runCycle());

    const [stored] = await ds.query(`SELECT subject, body FROM notifications WHERE id = $1`, [id]);
    expect(stored).toEqual({ subject: 'half a pair \uFFFD here', body: 'trailing low \uFFFD' });
    expect(app.provider.calls[0].message).toMatchObject({
      subject: 'half a pair \uFFFD here',
      body: 'trailing low \uFFFD',
    });
    expect((await readNotification(ds, id)).status).toBe('Sent');
  });

  it('passes RTL marks, zero-width joiners and emoji through unchanged and keeps them out of error texts and logs', async () => {
    // Right-to-left override, RLM, ZWJ family emoji, a flag, combining marks.
    const address = '\u202Emoc.elpmaxe@\u200Fنور\u200D👩‍👩‍👧🇺🇦';
    const subject = 'שלום 👋🏽 e\u0301\u0301 \u2066isolated\u2069';
    const body = `body ${'🔥'.repeat(1000)} ‮reversed‬ end`;
    const odd = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 2),
      recipientAddress: address,
      subject,
      body,
    });
    const ordinary = await ordinaryRow();
    app.provider.respondWith((message) => {
      if (message.id === odd) {
        throw new NonRetriableDeliveryError(
          'invalid_address',
          `bad recipient ${message.recipientAddress} for "${message.subject}"`,
        );
      }
      return { providerMessageId: `p-${message.id}` };
    });

    completed(await app.cycles.runCycle());

    expect(app.provider.calls.find((c) => c.message.id === odd)?.message).toMatchObject({
      recipientAddress: address,
      subject,
      body,
    });
    const row = await readNotification(ds, odd);
    expect(row.status).toBe('Failed');
    expect(row.last_error_message).toBe('bad recipient [redacted] for "[redacted]"');
    const logs = JSON.stringify(app.logs.entries);
    for (const fragment of ['نور', 'שלום', '🔥', '👩‍👩‍👧']) expect(logs).not.toContain(fragment);
    await expectOrdinaryRowSent(ordinary);
  });

  it('ends a row whose attempts are at the integer maximum terminally, without calling the provider', async () => {
    const maxed = await insertNotification(ds, {
      status: 'Failed',
      attempts: 2_147_483_647,
      nextAttemptAt: minutesAgo(app.clock.now(), 2),
    });
    const ordinary = await ordinaryRow();

    const report = completed(await app.cycles.runCycle());

    expect(report.counts).toMatchObject({ sent: 1, terminal: 1, errors: 0 });
    expect(app.provider.callsFor(maxed)).toBe(0);
    expect(await readNotification(ds, maxed)).toMatchObject({
      status: 'Failed',
      attempts: 2_147_483_647,
      next_attempt_at: null,
      last_error_code: 'max_attempts_exhausted',
    });
    await expectOrdinaryRowSent(ordinary);
  });

  it('leaves a Pending row with only next_attempt_at (no scheduled_at) to the dispatcher', async () => {
    const misfiled = await insertNotification(ds, {
      status: 'Pending',
      nextAttemptAt: minutesAgo(app.clock.now(), 10),
    });
    const before = await readNotification(ds, misfiled);
    const ordinary = await ordinaryRow();

    completed(await app.cycles.runCycle());

    expect(await readNotification(ds, misfiled)).toEqual(before);
    expect(before.due_at).toBeNull();
    await expectOrdinaryRowSent(ordinary);
  });
});
