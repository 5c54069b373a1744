import type { DataSource } from 'typeorm';
import {
  NonRetriableDeliveryError,
  RetriableDeliveryError,
  ThrottledDeliveryError,
  type OutgoingNotification,
  type SendResult,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { personalMarker } from './support/personal-data';
import { personalRunsIn } from './support/personal-data-runs';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

interface Row {
  readonly channel: 'email' | 'push' | 'sms';
  readonly recipientAddress: string;
  readonly subject: string;
  readonly body: string;
  /** What the provider does with this row: echo its values back in some form. */
  readonly answer: (message: OutgoingNotification) => SendResult;
}

/** JSON as encoders that escape everything outside ASCII write it (\u00e9 for é). */
const jsonAscii = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
const formEncoded = (value: string): string => encodeURIComponent(value).replaceAll('%20', '+');

/**
 * A provider that echoes a notification's address, subject and body back in its
 * error codes, texts and message ids, in the encodings providers use, through a
 * real cycle on real PostgreSQL: none of it may reach a stored column, the
 * outbox, an alert or a log line.
 */
describe('personal data echoed by a provider (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let app: RetryTestApp;
  let ds: DataSource;
  const marker = personalMarker();
  const token = `fcm:${marker}APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx`;
  const phone = '+447700900123';

  // Bodies with what JSON escapes (quotes, line breaks, tabs, non-ASCII letters).
  const person = (n: number, channel: Row['channel'], address: string) => ({
    channel,
    recipientAddress: address,
    // Words of their own: an 8-character run of a common word ("statement") would also match the
    // library's own log vocabulary (prepared-statements).
    subject: `Your "${marker}" payslip nr ${n} for Amélie`,
    body: `Dear Amélie,\n\tyour one-time code is ${n}QX${marker}; the balance "1234.56 EUR" is due.`,
  });

  const rows: Row[] = [
    {
      ...person(1, 'email', `${marker}.amelie.durand1@mail-1.example.net`),
      answer: (m) => {
        throw new NonRetriableDeliveryError(
          'invalid_recipient',
          `unknown to=${encodeURIComponent(m.recipientAddress)}&subject=${formEncoded(m.subject!)}`,
          { httpStatus: 422 },
        );
      },
    },
    {
      ...person(2, 'email', `${marker}.jonas.kowalski2@mail-2.example.net`),
      answer: (m) => {
        throw new RetriableDeliveryError(
          'provider_5xx',
          `upstream said ${jsonAscii({ to: m.recipientAddress, subject: m.subject, body: m.body })}`,
          { httpStatus: 502 },
        );
      },
    },
    {
      ...person(3, 'email', `${marker}.priya.raman3@mail-3.example.net`),
      answer: (m) => {
        throw new Error(`gateway: ${jsonAscii(jsonAscii({ message: { body: m.body } }))}`);
      },
    },
    {
      ...person(4, 'email', `${marker}.tomasz.nowak4@mail-4.example.net`),
      answer: (m) => {
        throw new NonRetriableDeliveryError(
          'content_rejected',
          `TEMPLATE "${m.subject!.toUpperCase()}" REFUSED, content "${m.body.slice(0, 40)}..."` +
            ` for ${m.recipientAddress.replace('@', '&#64;')}`,
        );
      },
    },
    {
      ...person(5, 'push', token),
      answer: (m) => {
        const half = m.recipientAddress.length / 2;
        throw new NonRetriableDeliveryError(
          m.recipientAddress,
          `token ...${m.recipientAddress.slice(half)} is not registered`,
        );
      },
    },
    {
      ...person(6, 'sms', phone),
      answer: () => {
        throw new NonRetriableDeliveryError(phone.slice(1), 'number unreachable');
      },
    },
    {
      ...person(7, 'sms', '+447700900777'),
      answer: () => {
        throw new ThrottledDeliveryError(60_000, '00447700900777', 'slow down');
      },
    },
    {
      ...person(8, 'email', `${marker}.chloe.martinez8@mail-8.example.net`),
      answer: (m) => ({ providerMessageId: `queued-${m.recipientAddress}-1718000000` }),
    },
  ];
  const personalValues = rows.flatMap((row) => [row.recipientAddress, row.subject, row.body]);
  const ids = new Map<string, Row>();

  beforeAll(async () => {
    // One cycle before all tests, which read what it left: an app of the describe, no reset between.
    app = await t.start({ options: { concurrency: 4 } });
    ds = app.dataSource;
    for (const channel of ['email', 'push', 'sms']) {
      await insertChannel(ds, { key: channel, maxAttempts: 5 });
    }
    const now = app.clock.now();
    for (const row of rows) {
      const id = await insertNotification(ds, {
        channel: row.channel,
        recipientAddress: row.recipientAddress,
        subject: row.subject,
        body: row.body,
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 1),
      });
      ids.set(id, row);
    }
    app.provider.respondWith((message) => ids.get(message.id)!.answer(message));
    completed(await app.cycles.runCycle());
  });

  const idOf = (n: number): string => [...ids.keys()][n - 1];

  it('the check sees a value in each form the provider used', () => {
    const { recipientAddress, subject, body } = rows[0];
    for (const echoed of [
      encodeURIComponent(recipientAddress),
      formEncoded(subject),
      jsonAscii(body),
      jsonAscii(jsonAscii(body)),
      body.slice(0, 40),
      subject.toUpperCase(),
      recipientAddress.replace('@', '&#64;'),
      token.slice(token.length / 2),
    ]) {
      expect(personalRunsIn(`x ${echoed} y`, personalValues)).not.toEqual([]);
    }
    expect(personalRunsIn('webhook answered HTTP 503', personalValues)).toEqual([]);
  });

  it('called the provider once per row', () => {
    expect(app.provider.calls).toHaveLength(rows.length);
  });

  it('stores no personal data in last_error_message, last_error_code, provider_message_id or attempt_history', async () => {
    for (const id of ids.keys()) {
      const stored = await readNotification(ds, id);
      const [{ history }] = await ds.query(
        `SELECT attempt_history::text AS history FROM notifications WHERE id = $1`,
        [id],
      );
      // Every row's attempt is in its history: the check below reads something.
      expect(JSON.parse(history)).toHaveLength(1);
      for (const column of [
        stored.last_error_message,
        stored.last_error_code,
        stored.provider_message_id,
        history as string,
      ]) {
        expect(personalRunsIn(column ?? '', personalValues)).toEqual([]);
      }
    }
  });

  it('keeps what operators need: the status prefix, the non-personal text, plain codes', async () => {
    const first = await readNotification(ds, idOf(1));
    expect(first).toMatchObject({ status: 'Failed', last_error_code: 'invalid_recipient' });
    expect(first.last_error_message).toMatch(/^HTTP 422: unknown to=\[redacted\]&subject=/);
    const second = await readNotification(ds, idOf(2));
    // `"` + the first characters of the marker are a run of the subject too: the quote goes with them.
    expect(second.last_error_message).toMatch(/^HTTP 502: upstream said \{"to":"?\[redacted\]"/);
    expect((await readNotification(ds, idOf(4))).last_error_message).toMatch(/^TEMPLATE "/);
  });

  it('replaces codes that are a push token or a phone number', async () => {
    expect(await readNotification(ds, idOf(5))).toMatchObject({
      last_error_code: 'provider_rejected',
      last_error_message: 'token ...[redacted] is not registered',
    });
    expect((await readNotification(ds, idOf(6))).last_error_code).toBe('provider_rejected');
    expect((await readNotification(ds, idOf(7))).last_error_code).toBe('provider_throttled');
  });

  it('stores a stand-in for a message id that carries the address, and the row is Sent', async () => {
    expect(await readNotification(ds, idOf(8))).toMatchObject({
      status: 'Sent',
      provider_message_id: expect.stringMatching(/^redacted:[0-9a-f]{16}$/),
    });
  });

  it('writes none of it to the outbox', async () => {
    const events = await outboxEvents(ds);
    // Terminal failures (rows 1, 4, 5, 6) and the delivery (row 8).
    expect(events.map((event) => event.message_key).sort()).toEqual(
      [1, 4, 5, 6, 8].map(idOf).sort(),
    );
    for (const event of events) {
      expect(personalRunsIn(JSON.stringify(event.payload), personalValues)).toEqual([]);
      expect(personalRunsIn(JSON.stringify(event.headers), personalValues)).toEqual([]);
    }
    const codes = events.map((event) => event.payload.errorCode);
    expect(codes).toEqual(expect.arrayContaining(['provider_rejected', 'invalid_recipient']));
  });

  it('alerts and logs none of it', () => {
    expect(app.alerts.alerts.length).toBeGreaterThan(0);
    expect(personalRunsIn(JSON.stringify(app.alerts.alerts), personalValues)).toEqual([]);
    expect(app.logs.entries.length).toBeGreaterThan(0);
    for (const entry of app.logs.entries) {
      expect(personalRunsIn(JSON.stringify(entry), personalValues)).toEqual([]);
    }
  });
});
