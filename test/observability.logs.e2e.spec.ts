import {
  DistributedLock,
  NonRetriableDeliveryError,
  ProviderCircuitBreakers,
  RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
  RetriableDeliveryError,
  ThrottledDeliveryError,
  type OutgoingNotification,
  type ResolvedNotificationsRetryOptions,
  type SendResult,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  minutesLater,
  readNotification,
} from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import {
  leakedValues,
  personalMarker,
  personalValues,
  type PersonalValues,
} from './support/personal-data';
import { scriptedAdapterFor, type ScriptedAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const MailerAdapter = scriptedAdapterFor('mailer');
const FlakyPushAdapter = scriptedAdapterFor('flaky-push');

type LogEntry = Record<string, unknown>;
type Behaviour = (message: OutgoingNotification) => SendResult;

/** A provider that echoes the recipient and the content back in its error texts, as many do. */
const echoing = {
  sent: (message: OutgoingNotification): SendResult => ({ providerMessageId: `pm-${message.id}` }),
  unavailable: (message: OutgoingNotification): never => {
    throw new RetriableDeliveryError('http_503', `bad ${message.recipientAddress} ${message.body}`);
  },
  rejected: (message: OutgoingNotification): never => {
    throw new NonRetriableDeliveryError(
      'recipient_rejected',
      `mailbox ${message.recipientAddress} refused "${message.subject}"`,
    );
  },
  crashed: (message: OutgoingNotification): never => {
    throw new Error(`socket hang up while sending to ${message.recipientAddress}: ${message.body}`);
  },
  throttled: (message: OutgoingNotification): never => {
    throw new ThrottledDeliveryError(null, 'provider_throttled', `slow down ${message.subject}`);
  },
};

/**
 * The host app's JSON log (nestjs-pino) over real cycles on real PostgreSQL:
 * every event of DESIGN.md §5 with its fields, and not a trace of the personal
 * data the rows, and the provider's error texts, carry.
 */
describe('observability: structured logs of the host app', () => {
  const marker = personalMarker();
  const seeded: PersonalValues[] = [];
  let db: TestDatabase;
  let host: HostTestApp;
  let mailer: ScriptedAdapter;
  let flakyPush: ScriptedAdapter;
  let options: ResolvedNotificationsRetryOptions;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startHostApp({
      databaseUrl: db.url,
      // One row at a time: rows are processed in due order, so which breaker sees what is fixed.
      retryWorker: {
        enabled: false,
        concurrency: 1,
        instanceId: 'logs-test-instance',
        circuitBreaker: {
          volumeThreshold: 3,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 600_000,
        },
      },
      adapters: [MailerAdapter, FlakyPushAdapter],
    });
    mailer = host.app.get(MailerAdapter);
    flakyPush = host.app.get(FlakyPushAdapter);
    options = host.app.get(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS);
  });

  afterAll(async () => {
    await host?.close();
    await db?.drop();
  });

  const entries = (): LogEntry[] => host.logEntries();
  const byEvent = (event: string, from = 0): LogEntry[] =>
    entries()
      .slice(from)
      .filter((entry) => entry.msg === event);

  async function seed(
    channel: string,
    dueMinutesAgo: number,
    extra: { attempts?: number; status?: 'Failed' | 'Pending'; kind?: 'email' | 'phone' } = {},
  ): Promise<string> {
    const values = personalValues(marker, seeded.length, extra.kind);
    seeded.push(values);
    const now = new Date();
    const status = extra.status ?? 'Failed';
    const due =
      dueMinutesAgo >= 0 ? minutesAgo(now, dueMinutesAgo) : minutesLater(now, -dueMinutesAgo);
    return insertNotification(host.dataSource, {
      channel,
      tenantId: '5f0c7f4e-7f55-4d47-9b53-2d3a3c1f9a10',
      ...values,
      status,
      attempts: extra.attempts ?? 0,
      nextAttemptAt: status === 'Failed' ? due : null,
      scheduledAt: status === 'Pending' ? due : null,
    });
  }

  describe('one cycle that sends, retries, defers, fails for good and passes over a disabled channel', () => {
    const ids: Record<string, string> = {};
    let firstLine: number;
    let report: ReturnType<typeof completed>;

    beforeAll(async () => {
      await insertChannel(host.dataSource, { key: 'email', providerKey: 'mailer', maxAttempts: 3 });
      await insertChannel(host.dataSource, {
        key: 'sms',
        providerKey: 'sms-gateway',
        isEnabled: false,
      });
      // Due order is processing order: the successes come first, so the mailer's failure rate
      // never reaches the breaker's threshold (3 of 7 at most).
      ids.sentFailed = await seed('email', 60);
      ids.sentPending = await seed('email', 55, { status: 'Pending' });
      ids.rejected = await seed('email', 50);
      ids.retried = await seed('email', 45);
      ids.lastAttempt = await seed('email', 40, { attempts: 2 });
      ids.throttled = await seed('email', 35);
      ids.crashed = await seed('email', 30);
      ids.notDue = await seed('email', -30);
      ids.smsDue1 = await seed('sms', 20, { kind: 'phone' });
      ids.smsDue2 = await seed('sms', 10, { kind: 'phone', status: 'Pending' });
      ids.smsNotDue = await seed('sms', -10, { kind: 'phone' });

      const behaviours = new Map<string, Behaviour>([
        [ids.sentFailed, echoing.sent],
        [ids.sentPending, echoing.sent],
        [ids.rejected, echoing.rejected],
        [ids.retried, echoing.unavailable],
        [ids.lastAttempt, echoing.unavailable],
        [ids.throttled, echoing.throttled],
        [ids.crashed, echoing.crashed],
      ]);
      mailer.respondWith((message) => {
        const behaviour = behaviours.get(message.id);
        if (!behaviour) throw new Error(`unexpected call for ${message.id}`);
        return behaviour(message);
      });

      firstLine = host.logLines.length;
      report = completed(await host.cycles.runCycle({ correlationId: 'corr-logs-cycle-1' }));
    });

    it('ran the cycle the test arranged', () => {
      expect(report.correlationId).toBe('corr-logs-cycle-1');
      expect(report.counts).toEqual({
        claimsLost: 0,
        processed: 7,
        sent: 2,
        retried: 2,
        terminal: 2,
        deferred: 1,
        skipped: 0,
        errors: 0,
      });
      expect(report.excludedChannels).toEqual([{ channel: 'sms', reason: 'disabled', dueRows: 2 }]);
      // Each due email row was handed to the provider once, with its personal values.
      expect(mailer.calls.map((call) => call.message.id).sort()).toEqual(
        [
          ids.sentFailed,
          ids.sentPending,
          ids.rejected,
          ids.retried,
          ids.lastAttempt,
          ids.throttled,
          ids.crashed,
        ].sort(),
      );
      expect(mailer.calls.every((call) => call.message.recipientAddress.includes(marker))).toBe(
        true,
      );
    });

    it('writes every line as one JSON object', () => {
      expect(host.logLines.length).toBeGreaterThan(firstLine);
      for (const line of host.logLines) {
        expect(line.endsWith('\n')).toBe(true);
        expect(line.trimEnd()).not.toContain('\n');
        expect(() => JSON.parse(line) as unknown).not.toThrow();
      }
    });

    it('logs retry-cycle-started and cycle-completed once, with the run id, correlation id and counts', () => {
      const started = byEvent('retry-cycle-started', firstLine);
      expect(started).toEqual([
        expect.objectContaining({
          level: 30,
          context: 'NotificationsRetryCycle',
          event: 'retry-cycle-started',
          runId: report.runId,
          correlationId: 'corr-logs-cycle-1',
          fencingToken: report.fencingToken,
        }),
      ]);
      expect(byEvent('cycle-completed', firstLine)).toEqual([
        expect.objectContaining({
          level: 30,
          event: 'cycle-completed',
          runId: report.runId,
          correlationId: 'corr-logs-cycle-1',
          stopReason: 'no-more-due',
          durationMs: report.durationMs,
          maxLagMs: report.maxLagMs,
          processed: 7,
          sent: 2,
          retried: 2,
          terminal: 2,
          deferred: 1,
          skipped: 0,
          errors: 0,
        }),
      ]);
    });

    it('logs one item line per processed row, with notificationId, channel, attempts and errorCode', () => {
      const item = (
        event: string,
        id: string,
        attempts: number,
        errorCode: string | null,
      ): unknown =>
        expect.objectContaining({
          event,
          runId: report.runId,
          correlationId: 'corr-logs-cycle-1',
          notificationId: id,
          channel: 'email',
          providerKey: 'mailer',
          attempts,
          errorCode,
          lagMs: expect.any(Number),
        });
      const sortById = (lines: LogEntry[]) =>
        [...lines].sort((a, b) => String(a.notificationId).localeCompare(String(b.notificationId)));
      const expectedSorted = (expected: Array<{ id: string; matcher: unknown }>) =>
        [...expected].sort((a, b) => a.id.localeCompare(b.id)).map((e) => e.matcher);

      expect(sortById(byEvent('item-sent', firstLine))).toEqual(
        expectedSorted([
          { id: ids.sentFailed, matcher: item('item-sent', ids.sentFailed, 1, null) },
          { id: ids.sentPending, matcher: item('item-sent', ids.sentPending, 1, null) },
        ]),
      );
      expect(sortById(byEvent('item-retried', firstLine))).toEqual(
        expectedSorted([
          { id: ids.retried, matcher: item('item-retried', ids.retried, 1, 'http_503') },
          { id: ids.crashed, matcher: item('item-retried', ids.crashed, 1, 'provider_error') },
        ]),
      );
      for (const line of byEvent('item-retried', firstLine)) {
        expect(new Date(String(line.nextAttemptAt)).getTime()).toBeGreaterThan(Date.now());
        expect(line.level).toBe(40);
      }
      expect(sortById(byEvent('item-failed-terminal', firstLine))).toEqual(
        expectedSorted([
          {
            id: ids.rejected,
            matcher: item('item-failed-terminal', ids.rejected, 1, 'recipient_rejected'),
          },
          {
            id: ids.lastAttempt,
            matcher: item('item-failed-terminal', ids.lastAttempt, 3, 'http_503'),
          },
        ]),
      );
      expect(byEvent('item-failed-terminal', firstLine).every((line) => line.level === 50)).toBe(
        true,
      );
      expect(byEvent('item-deferred', firstLine)).toEqual([
        item('item-deferred', ids.throttled, 0, 'provider_throttled'),
      ]);
      // Rows that were not due, or wait on the disabled channel, have no item line at all.
      const itemIds = entries()
        .slice(firstLine)
        .filter((entry) => typeof entry.notificationId === 'string')
        .map((entry) => entry.notificationId);
      for (const id of [ids.notDue, ids.smsDue1, ids.smsDue2, ids.smsNotDue]) {
        expect(itemIds).not.toContain(id);
      }
    });

    it('logs channel-disabled once for the disabled channel with its due rows (info: a decision, not a mistake), and no channels-excluded line', () => {
      expect(byEvent('channel-disabled', firstLine)).toEqual([
        expect.objectContaining({
          level: 30,
          msg: 'channel-disabled',
          event: 'channel-disabled',
          runId: report.runId,
          correlationId: 'corr-logs-cycle-1',
          channels: 1,
          dueRows: 2,
          sample: [{ channel: 'sms', dueRows: 2 }],
        }),
      ]);
      // Other reasons have their own line; nothing but a disabled channel is left out here.
      expect(byEvent('channels-excluded', firstLine)).toEqual([]);
    });

    it('raises the terminal-failure alert line for each terminal row, with ids and codes only', () => {
      const alerts = byEvent('notification-terminal-failure-alert', firstLine);
      expect(alerts.map((line) => line.notificationId).sort()).toEqual(
        [ids.rejected, ids.lastAttempt].sort(),
      );
      for (const line of alerts) {
        expect(line).toMatchObject({ runId: report.runId, correlationId: 'corr-logs-cycle-1' });
      }
    });

    it('puts the run id and correlation id on every line the cycle wrote', () => {
      const cycleLines = entries().slice(firstLine);
      const start = cycleLines.findIndex((entry) => entry.msg === 'retry-cycle-started');
      const end = cycleLines.findIndex((entry) => entry.msg === 'cycle-completed');
      expect(start).toBeGreaterThanOrEqual(0);
      expect(end).toBeGreaterThan(start);
      // started, channel-disabled, seven item lines, two alerts, completed.
      expect(end - start + 1).toBe(12);
      for (const entry of cycleLines.slice(start, end + 1)) {
        expect(entry).toMatchObject({ runId: report.runId, correlationId: 'corr-logs-cycle-1' });
      }
    });

    it('stores the provider texts that echoed personal data only in redacted form', async () => {
      for (const id of [ids.retried, ids.lastAttempt, ids.rejected, ids.crashed, ids.throttled]) {
        const row = await readNotification(host.dataSource, id);
        expect(row.last_error_message).toContain('[redacted]');
        expect(row.last_error_message).not.toContain(marker);
      }
    });
  });

  describe('a tick while another instance holds the lease', () => {
    it('logs lease-not-acquired with the lock key, the run id and the correlation id', async () => {
      const lock = host.app.get(DistributedLock);
      const held = await lock.acquire(options.lockKey, 'another-instance', 60_000);
      expect(held).not.toBeNull();
      const firstLine = host.logLines.length;
      try {
        const report = await host.cycles.runCycle({ correlationId: 'corr-logs-lease' });
        expect(report).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });

        expect(byEvent('lease-not-acquired', firstLine)).toEqual([
          expect.objectContaining({
            level: 30,
            context: 'NotificationsRetryCycle',
            event: 'lease-not-acquired',
            lockKey: options.lockKey,
            runId: report.runId,
            correlationId: 'corr-logs-lease',
          }),
        ]);
        // Nothing ran: no cycle lines.
        expect(byEvent('retry-cycle-started', firstLine)).toEqual([]);
      } finally {
        await lock.release(held!);
      }
    });
  });

  describe('a provider that keeps failing', () => {
    it('logs circuit-opened for that provider, once, during the cycle', async () => {
      await insertChannel(host.dataSource, {
        key: 'push',
        providerKey: 'flaky-push',
        maxAttempts: 5,
      });
      const push: string[] = [];
      for (const minutes of [25, 24, 23, 22, 21]) push.push(await seed('push', minutes));
      flakyPush.respondWith(echoing.unavailable);
      const firstLine = host.logLines.length;

      const report = completed(await host.cycles.runCycle({ correlationId: 'corr-logs-circuit' }));

      // Three calls reach the volume threshold, all failed: open; the other two rows are left alone.
      expect(flakyPush.calls).toHaveLength(3);
      expect(host.app.get(ProviderCircuitBreakers).state('flaky-push')).toBe('open');
      expect(report.counts).toMatchObject({ processed: 3, retried: 3 });
      const opened = byEvent('circuit-opened', firstLine);
      expect(opened).toEqual([
        expect.objectContaining({
          level: 50,
          context: 'NotificationsRetryCircuit',
          event: 'circuit-opened',
          providerKey: 'flaky-push',
          state: 'open',
          runId: report.runId,
          correlationId: 'corr-logs-circuit',
        }),
      ]);
      // It was written inside the cycle: after its start line, before its completion line.
      const lines = entries().slice(firstLine);
      const at = (event: string) => lines.findIndex((entry) => entry.msg === event);
      expect(at('circuit-opened')).toBeGreaterThan(at('retry-cycle-started'));
      expect(at('circuit-opened')).toBeLessThan(at('cycle-completed'));
      // The mailer's breaker never opened.
      expect(host.app.get(ProviderCircuitBreakers).state('mailer')).toBe('closed');
      // The sms rows still wait on their disabled channel: one channel-disabled line this cycle too.
      expect(byEvent('channel-disabled', firstLine)).toEqual([
        expect.objectContaining({
          runId: report.runId,
          correlationId: 'corr-logs-circuit',
          dueRows: 2,
          sample: [{ channel: 'sms', dueRows: 2 }],
        }),
      ]);
    });
  });

  it('never wrote a seeded address, subject or body, nor any part marked with the marker', () => {
    // Every seeded row reached the process (a provider call or a count), so leaks had every chance.
    expect(seeded.length).toBe(16);
    const raw = host.logLines.join('');
    expect(raw.length).toBeGreaterThan(0);
    expect(leakedValues(raw, marker, seeded)).toEqual([]);
  });
});
