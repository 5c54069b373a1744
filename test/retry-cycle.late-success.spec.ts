import { RetriableDeliveryError } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { deferred, waitFor } from './support/deferred';
import {
  eventSequence,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

const TIMEOUT_MS = 300;

/**
 * Issue 18 point 5, DESIGN §3.4 and §7: a success the provider answers after
 * its attempt was written off (past the timeout and the settle margin) is
 * recorded as Sent, with its Sent event, whatever the row became meanwhile:
 * retrying, terminal Failed, or claimed again by another worker. Instance A
 * writes its calls off at the timeout (no margin); instance B takes the rows
 * meanwhile, as another instance of the app would.
 */
describe('a success answered after its attempt was written off (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    options: { settleMarginMs: 0, instanceId: 'a' },
    channels: [
      {
        key: 'email',
        maxAttempts: 2,
        timeoutMs: TIMEOUT_MS,
        backoffKind: 'Fixed',
        backoffBaseMs: 0,
        backoffMaxMs: null,
      },
    ],
  });
  let other: RetryTestApp;

  beforeAll(async () => {
    // Another instance on the same database: its own process state, pool and provider.
    other = await t.start({ options: { instanceId: 'b' } });
  });

  /**
   * Log lines of both instances: Nest's logger is one per process, so each line goes to the
   * capturing logger of whichever app was created last.
   */
  const logged = (event: string): Array<Record<string, unknown>> => [
    ...t.app.logs.events(event),
    ...other.logs.events(event),
  ];

  beforeEach(() => {
    // The tables are the first app's to reset; this one only forgets what it saw.
    other.clock.set(t.app.clock.now());
    other.provider.calls.length = 0;
    other.alerts.alerts.length = 0;
    other.logs.entries.length = 0;
  });

  /** A due row whose first call, by A, is written off while the provider has yet to answer. */
  async function writtenOffByA(): Promise<{ id: string; answer: () => void }> {
    const id = await insertNotification(t.ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(t.app.clock.now(), 1),
    });
    const gate = deferred();
    t.app.provider.respondWith(async (message) => {
      await gate.promise;
      return { providerMessageId: `late-${message.id}` };
    });
    const report = completed(await t.app.cycles.runCycle());
    expect(report.counts).toMatchObject({ retried: 1, sent: 0 });
    expect(await readNotification(t.ds, id)).toMatchObject({
      status: 'Failed',
      attempts: 1,
      last_error_code: 'provider_timeout',
    });
    return { id, answer: () => gate.resolve() };
  }

  it('records it as Sent after another instance’s last attempt failed and ended the row terminal: the Sent event’s sequence is above the Failed one’s', async () => {
    const { id, answer } = await writtenOffByA();
    // B makes the last attempt; the provider fails it (a 503 on the duplicate).
    other.provider.respondWith(() => {
      throw new RetriableDeliveryError('http_503', 'upstream unavailable');
    });
    expect(completed(await other.cycles.runCycle()).counts).toMatchObject({ terminal: 1 });
    expect(await readNotification(t.ds, id)).toMatchObject({ status: 'Failed', attempts: 2 });
    expect(other.alerts.alerts).toHaveLength(1);

    // A's cycle is long over and its lease released when the answer comes.
    expect(t.app.cycles.isRunning).toBe(false);
    answer();
    await waitFor(() => logged('late-success-recorded').length > 0).catch(() => undefined);

    const row = await readNotification(t.ds, id);
    expect(row).toMatchObject({
      status: 'Sent',
      // The call that succeeded was counted when its timeout was written: not counted again.
      attempts: 2,
      provider_message_id: `late-${id}`,
      next_attempt_at: null,
      last_error_code: null,
      claim_token: null,
    });
    expect(row.sent_at).not.toBeNull();
    const events = await outboxEvents(t.ds, id);
    expect(events.map((e) => [e.payload.status, e.payload.sequence, e.payload.attempts])).toEqual([
      ['Failed', 1, 2],
      ['Sent', 2, 2],
    ]);
    expect(events[1].payload).toMatchObject({
      providerMessageId: `late-${id}`,
      providerKey: 'scripted',
      errorCode: null,
    });
    expect(await eventSequence(t.ds, id)).toBe(2);
    // The terminal alert B raised is not taken back: the Sent event supersedes the Failed one.
    expect(other.alerts.alerts).toHaveLength(1);
    const [line] = logged('late-success-recorded');
    expect(line).toMatchObject({
      notificationId: id,
      foundAs: 'terminal',
      writtenOffAs: 'timeout',
      attempts: 2,
      sequence: 2,
    });
    const stored = await t.ds.query<Array<{ recipient_address: string; body: string }>>(
      `SELECT recipient_address, body FROM notifications WHERE id = $1`,
      [id],
    );
    expect(JSON.stringify(line)).not.toContain(stored[0].recipient_address);
    expect(JSON.stringify(line)).not.toContain(stored[0].body);
    expect(logged('late-answer-unrecorded')).toEqual([]);
    expect(t.app.provider.callsFor(id)).toBe(1);
  });

  it.each([
    ['fails', () => Promise.reject(new RetriableDeliveryError('http_503', 'upstream unavailable'))],
    ['succeeds too', () => Promise.resolve({ providerMessageId: 'duplicate-id' })],
  ])(
    'records it while another instance holds a claim on the row; that claim’s write, whose call %s, writes nothing',
    async (_, secondAnswer) => {
      const { id, answer } = await writtenOffByA();
      const bGate = deferred();
      other.provider.respondWith(async () => {
        await bGate.promise;
        return secondAnswer();
      });
      const bCycle = other.cycles.runCycle();
      await waitFor(() => other.provider.calls.length === 1);
      const claimed = await readNotification(t.ds, id);
      expect(claimed.claim_token).not.toBeNull();

      answer();
      await waitFor(() => logged('late-success-recorded').length > 0).catch(() => undefined);
      expect(await readNotification(t.ds, id)).toMatchObject({
        status: 'Sent',
        attempts: 1,
        provider_message_id: `late-${id}`,
        claim_token: null,
      });
      bGate.resolve();
      const report = completed(await bCycle);

      expect(report.counts).toMatchObject({ claimsLost: 1, sent: 0, retried: 0 });
      expect(logged('claim-lost')).toEqual([expect.objectContaining({ notificationId: id })]);
      expect(await readNotification(t.ds, id)).toMatchObject({
        status: 'Sent',
        attempts: 1,
        provider_message_id: `late-${id}`,
      });
      const events = await outboxEvents(t.ds, id);
      expect(events.map((e) => [e.payload.status, e.payload.sequence])).toEqual([['Sent', 1]]);
      expect(logged('late-success-recorded')).toEqual([
        expect.objectContaining({ notificationId: id, foundAs: 'claimed' }),
      ]);
    },
  );

  it('leaves a row already Sent by another call alone: no second event', async () => {
    const { id, answer } = await writtenOffByA();
    other.provider.respondWith((message) => ({ providerMessageId: `b-${message.id}` }));
    expect(completed(await other.cycles.runCycle()).counts).toMatchObject({ sent: 1 });

    answer();
    await waitFor(() => logged('late-success-already-sent').length > 0);

    expect(await readNotification(t.ds, id)).toMatchObject({
      status: 'Sent',
      attempts: 2,
      provider_message_id: `b-${id}`,
    });
    expect((await outboxEvents(t.ds, id)).map((e) => e.payload.sequence)).toEqual([1]);
    expect(logged('late-success-recorded')).toEqual([]);
  });

  it('records one that answers while the app shuts down, before its DataSource closes', async () => {
    const closing = await t.start({
      options: { settleMarginMs: 0, shutdownGraceMs: 5_000, instanceId: 'closing' },
    });
    let closed = false;
    closing.clock.set(t.app.clock.now());
    const id = await insertNotification(t.ds, {
      status: 'Pending',
      scheduledAt: minutesAgo(t.app.clock.now(), 1),
    });
    const gate = deferred();
    closing.provider.respondWith(async (message) => {
      await gate.promise;
      return { providerMessageId: `late-${message.id}` };
    });
    expect(completed(await closing.cycles.runCycle()).counts).toMatchObject({ retried: 1 });

    const started = Date.now();
    const shutdown = closing.close().then(() => (closed = true));
    // The answer comes after shutdown began: the worker is past its last cycle.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed).toBe(false);
    gate.resolve();
    await shutdown;

    // Waited for that call, not for the whole grace.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(await readNotification(t.ds, id)).toMatchObject({
      status: 'Sent',
      attempts: 1,
      provider_message_id: `late-${id}`,
    });
    expect((await outboxEvents(t.ds, id)).map((e) => e.payload.status)).toEqual(['Sent']);
  });
});
