import {
  DistributedLock,
  NonRetriableDeliveryError,
  ProviderCircuitBreakers,
  RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
  RetriableDeliveryError,
  RetryMetricName,
  ThrottledDeliveryError,
  type CompletedCycleReport,
  type OutgoingNotification,
  type SendResult,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { insertChannel, insertNotification, minutesAgo, minutesLater } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import {
  leakedValues,
  personalMarker,
  personalValues,
  type PersonalValues,
} from './support/personal-data';
import { scrapeMetrics, type PromScrape } from './support/prometheus-text';
import { scriptedAdapterFor, type ScriptedAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const MailerAdapter = scriptedAdapterFor('mailer');
const PusherAdapter = scriptedAdapterFor('pusher');
const FlakyAdapter = scriptedAdapterFor('flaky');

const M = RetryMetricName;
const TENANT = '0b9f3a52-1c1e-4a7b-8f0e-6d6f25a7c3e1';
const EXPECTED_TYPES: Record<keyof typeof RetryMetricName, string> = {
  processed: 'counter',
  sent: 'counter',
  retried: 'counter',
  terminalFailed: 'counter',
  deferred: 'counter',
  itemErrors: 'counter',
  leaseSkipped: 'counter',
  failedBacklog: 'gauge',
  channelDisabledRows: 'gauge',
  channelsExcluded: 'gauge',
  circuitState: 'gauge',
  claimsLapsed: 'counter',
  claimsLost: 'counter',
  lastCycleTimestamp: 'gauge',
  cycleDuration: 'histogram',
  claimDuration: 'histogram',
  settleDuration: 'histogram',
  lag: 'histogram',
  lateAnswers: 'counter',
  lateSuccesses: 'counter',
  databaseClientErrors: 'counter',
  callsInFlight: 'gauge',
  statementRetries: 'counter',
};
// Bounded cardinality: these and nothing else (le is the histogram's bucket bound).
const ALLOWED_LABELS = new Set(['channel', 'provider', 'le', 'recorded', 'reason', 'statement']);

/** Metric names of the contract with no sample in the scrape (histograms: no _bucket/_sum/_count). */
const withoutSamples = (scrape: PromScrape): string[] =>
  Object.values(M).filter(
    (name) => !scrape.samples.some((s) => s.name === name || s.name.startsWith(`${name}_`)),
  );

type Outcome = 'sent' | 'retriable' | 'rejected' | 'throttled';

const respond = (outcome: Outcome, message: OutgoingNotification): SendResult => {
  switch (outcome) {
    case 'sent':
      return { providerMessageId: `pm-${message.id}` };
    case 'retriable':
      throw new RetriableDeliveryError(
        'http_503',
        `bad ${message.recipientAddress} ${message.body}`,
      );
    case 'rejected':
      throw new NonRetriableDeliveryError('recipient_rejected', `no ${message.recipientAddress}`);
    case 'throttled':
      throw new ThrottledDeliveryError(null);
  }
};

/**
 * GET /metrics of the host app over HTTP, around real cycles on real
 * PostgreSQL: every metric of the contract is exposed, each moves by exactly
 * what the cycle did, and labels stay bounded. Deltas against a scrape taken
 * before, since prom-client's registry outlives any one app.
 */
describe('observability: Prometheus metrics of the host app', () => {
  const marker = personalMarker();
  const seeded: PersonalValues[] = [];
  const seededIds: string[] = [];
  let db: TestDatabase;
  let host: HostTestApp;
  let mailer: ScriptedAdapter;
  let pusher: ScriptedAdapter;
  let flaky: ScriptedAdapter;
  const behaviours = new Map<string, Outcome>();

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startHostApp({
      databaseUrl: db.url,
      // One row at a time, in due order: which breaker sees what is fixed.
      retryWorker: {
        enabled: false,
        concurrency: 1,
        circuitBreaker: {
          volumeThreshold: 3,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 600_000,
        },
      },
      adapters: [MailerAdapter, PusherAdapter, FlakyAdapter],
    });
    mailer = host.app.get(MailerAdapter);
    pusher = host.app.get(PusherAdapter);
    flaky = host.app.get(FlakyAdapter);
    for (const adapter of [mailer, pusher, flaky]) {
      adapter.respondWith((message) => respond(behaviours.get(message.id) ?? 'retriable', message));
    }
  });

  afterAll(async () => {
    await host?.close();
    await db?.drop();
  });

  async function seed(
    channel: string,
    status: 'Failed' | 'Pending' | 'Sent',
    due: Date | null,
    extra: { attempts?: number; outcome?: Outcome } = {},
  ): Promise<{ id: string; due: Date | null }> {
    const values = personalValues(marker, seeded.length, channel === 'sms' ? 'phone' : 'email');
    seeded.push(values);
    const id = await insertNotification(host.dataSource, {
      channel,
      tenantId: TENANT,
      ...values,
      status,
      attempts: extra.attempts ?? 0,
      nextAttemptAt: status === 'Failed' ? due : null,
      scheduledAt: status === 'Pending' ? due : null,
      sentAt: status === 'Sent' ? new Date() : null,
    });
    seededIds.push(id);
    if (extra.outcome) behaviours.set(id, extra.outcome);
    return { id, due };
  }

  const sql = <T>(query: string, params: unknown[] = []): Promise<T[]> =>
    host.dataSource.query(query, params);

  describe('a cycle that sends, retries, fails, defers, errors and passes over a disabled channel', () => {
    let before: PromScrape;
    let after: PromScrape;
    let report: CompletedCycleReport;
    let cycleStartedAt: number;
    let cycleEndedAt: number;
    const processed: Array<{ channel: string; due: Date }> = [];

    beforeAll(async () => {
      await insertChannel(host.dataSource, { key: 'email', providerKey: 'mailer', maxAttempts: 3 });
      await insertChannel(host.dataSource, { key: 'push', providerKey: 'pusher', maxAttempts: 3 });
      await insertChannel(host.dataSource, { key: 'sms', providerKey: 'sms-gw', isEnabled: false });
      const now = new Date();
      const at = (minutes: number) => minutesAgo(now, minutes);
      const email: Array<[Outcome, number]> = [
        ['sent', 50],
        ['sent', 49],
        ['sent', 48],
        ['retriable', 47], // retried
        ['throttled', 46], // deferred
        ['rejected', 45], // terminal
      ];
      for (const [outcome, minutes] of email) {
        const row = await seed('email', 'Failed', at(minutes), { outcome });
        processed.push({ channel: 'email', due: row.due! });
      }
      // Third and last attempt: terminal.
      const last = await seed('email', 'Failed', at(44), { attempts: 2, outcome: 'retriable' });
      processed.push({ channel: 'email', due: last.due! });
      // Delivered, but its unit of work cannot commit: an item error, the row stays due.
      const broken = await seed('email', 'Pending', at(43), { outcome: 'sent' });
      await sql(`CREATE FUNCTION refuse_update_for_test() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN RAISE EXCEPTION 'update refused by the test'; END $$`);
      // Its outcome's write (the one that clears the claim) is refused, and so is the hold.
      await sql(`CREATE TRIGGER refuse_update_for_test BEFORE UPDATE ON notifications FOR EACH ROW
                   WHEN (OLD.id = '${broken.id}' AND OLD.claim_token IS NOT NULL AND NEW.claim_token IS NULL)
                   EXECUTE FUNCTION refuse_update_for_test()`);
      for (const [outcome, minutes] of [
        ['sent', 40],
        ['sent', 39],
        ['retriable', 38],
      ] as Array<[Outcome, number]>) {
        const row = await seed('push', 'Pending', at(minutes), { outcome });
        processed.push({ channel: 'push', due: row.due! });
      }
      // Not processed: not due yet, already final, or on the disabled channel.
      await seed('email', 'Failed', minutesLater(now, 120));
      await seed('email', 'Failed', minutesLater(now, 90));
      await seed('push', 'Failed', null, { attempts: 3 });
      await seed('push', 'Sent', null, { attempts: 1 });
      for (const minutes of [30, 29, 28]) await seed('sms', 'Failed', at(minutes));
      await seed('sms', 'Pending', at(27));
      await seed('sms', 'Failed', minutesLater(now, 30));

      before = await scrapeMetrics(host.baseUrl);
      cycleStartedAt = Date.now();
      report = completed(await host.cycles.runCycle());
      cycleEndedAt = Date.now();
      after = await scrapeMetrics(host.baseUrl);
      await sql(`DROP TRIGGER refuse_update_for_test ON notifications`);
    });

    const delta = (name: string, labels?: Record<string, string>): number =>
      after.value(name, labels) - before.value(name, labels);

    it('ran the cycle the test arranged', () => {
      expect(report.counts).toEqual({
        claimsLost: 0,
        processed: 10,
        sent: 5,
        retried: 2,
        terminal: 2,
        deferred: 1,
        skipped: 0,
        errors: 1,
      });
      expect(report.excludedChannels).toEqual([{ channel: 'sms', reason: 'disabled', dueRows: 4 }]);
    });

    it('exposes every metric of the contract, with its type', () => {
      for (const [key, name] of Object.entries(M) as Array<[keyof typeof M, string]>) {
        expect({ name, type: after.types.get(name) }).toEqual({ name, type: EXPECTED_TYPES[key] });
      }
      // Every series of an active channel starts at zero, the circuit gauge included.
      expect(withoutSamples(after)).toEqual([]);
    });

    it('counts outcomes per channel and provider, by exactly what the cycle did', () => {
      const email = { channel: 'email', provider: 'mailer' };
      const push = { channel: 'push', provider: 'pusher' };
      expect({
        processedEmail: delta(M.processed, email),
        processedPush: delta(M.processed, push),
        sentEmail: delta(M.sent, email),
        sentPush: delta(M.sent, push),
        retriedEmail: delta(M.retried, email),
        retriedPush: delta(M.retried, push),
        terminalEmail: delta(M.terminalFailed, email),
        terminalPush: delta(M.terminalFailed, push),
        deferredEmail: delta(M.deferred, email),
        deferredPush: delta(M.deferred, push),
        itemErrorsEmail: delta(M.itemErrors, { channel: 'email' }),
        itemErrorsPush: delta(M.itemErrors, { channel: 'push' }),
      }).toEqual({
        processedEmail: 7,
        processedPush: 3,
        sentEmail: 3,
        sentPush: 2,
        retriedEmail: 1,
        retriedPush: 1,
        terminalEmail: 2,
        terminalPush: 0,
        deferredEmail: 1,
        deferredPush: 0,
        itemErrorsEmail: 1,
        itemErrorsPush: 0,
      });
      // And nothing under any other label: the totals are the report's.
      expect(delta(M.processed)).toBe(report.counts.processed);
      expect(delta(M.sent)).toBe(report.counts.sent);
      expect(delta(M.retried)).toBe(report.counts.retried);
      expect(delta(M.terminalFailed)).toBe(report.counts.terminal);
      expect(delta(M.deferred)).toBe(report.counts.deferred);
      expect(delta(M.itemErrors)).toBe(report.counts.errors);
      expect(delta(M.leaseSkipped)).toBe(0);
    });

    it('sets the backlog gauge to the Failed rows awaiting a retry per channel, as SQL counts them', async () => {
      const rows = await sql<{ channel: string; rows: number }>(
        `SELECT channel, count(*)::int AS rows FROM notifications
          WHERE status = 'Failed' AND next_attempt_at IS NOT NULL GROUP BY channel`,
      );
      const fromSql = Object.fromEntries(rows.map((row) => [row.channel, row.rows]));
      const gauge = Object.fromEntries(
        after.find(M.failedBacklog).map((sample) => [sample.labels.channel, sample.value]),
      );
      expect(gauge).toEqual(fromSql);
      // email: one retried + one deferred + two not due; push: one retried; sms: four waiting.
      expect(gauge).toEqual({ email: 4, push: 1, sms: 4 });
    });

    it('sets channel_disabled_rows to the due rows of the disabled channel, and only for it', async () => {
      const [{ due }] = await sql<{ due: number }>(
        `SELECT count(*)::int AS due FROM notifications WHERE channel = 'sms' AND due_at <= $1`,
        [new Date(cycleStartedAt)],
      );
      expect(due).toBe(4);
      expect(after.find(M.channelDisabledRows)).toEqual([
        { name: M.channelDisabledRows, labels: { channel: 'sms' }, value: due },
      ]);
    });

    it('observes one lag per processed row, each the time from due to processing', () => {
      for (const channel of ['email', 'push']) {
        const rows = processed.filter((row) => row.channel === channel);
        expect({ channel, count: delta(`${M.lag}_count`, { channel }) }).toEqual({
          channel,
          count: rows.length,
        });
        const sum = delta(`${M.lag}_sum`, { channel });
        const lowest = rows.reduce((total, row) => total + (cycleStartedAt - row.due.getTime()), 0);
        const highest = rows.reduce((total, row) => total + (cycleEndedAt - row.due.getTime()), 0);
        expect(sum).toBeGreaterThanOrEqual(lowest);
        expect(sum).toBeLessThanOrEqual(highest);
        // 38 to 50 minutes overdue: all in the one-hour bucket, none in the 15-minute one.
        expect(delta(`${M.lag}_bucket`, { channel, le: '900000' })).toBe(0);
        expect(delta(`${M.lag}_bucket`, { channel, le: '3600000' })).toBe(rows.length);
      }
      expect(delta(`${M.lag}_count`)).toBe(report.counts.processed);
    });

    it('observes the cycle duration once, with the duration the report gives, and stamps the cycle time', () => {
      expect(delta(`${M.cycleDuration}_count`)).toBe(1);
      expect(delta(`${M.cycleDuration}_sum`)).toBe(report.durationMs);
      expect(delta(`${M.cycleDuration}_bucket`, { le: '+Inf' })).toBe(1);
      const stamp = after.value(M.lastCycleTimestamp);
      expect(stamp).toBeGreaterThanOrEqual(cycleStartedAt / 1000);
      expect(stamp).toBeLessThanOrEqual(cycleEndedAt / 1000);
    });
  });

  describe('a tick skipped for another instance’s lease', () => {
    it('increments lease_skipped by one, leaving the last-cycle stamp and the outcome counters alone', async () => {
      const lock = host.app.get(DistributedLock);
      const { lockKey } = host.app.get(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS);
      const held = await lock.acquire(lockKey, 'another-instance', 60_000);
      expect(held).not.toBeNull();
      try {
        const before = await scrapeMetrics(host.baseUrl);
        const report = await host.cycles.runCycle();
        const after = await scrapeMetrics(host.baseUrl);

        expect(report).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });
        expect(after.value(M.leaseSkipped) - before.value(M.leaseSkipped)).toBe(1);
        // Only a completed cycle moves it: a lease nobody can take must let it age, for the alert.
        expect(before.value(M.lastCycleTimestamp)).toBeGreaterThan(0);
        expect(after.value(M.lastCycleTimestamp)).toBe(before.value(M.lastCycleTimestamp));
        expect(after.value(`${M.cycleDuration}_count`)).toBe(
          before.value(`${M.cycleDuration}_count`),
        );
        expect(after.value(M.processed)).toBe(before.value(M.processed));
      } finally {
        await lock.release(held!);
      }
    });
  });

  describe('a provider that keeps failing', () => {
    it('sets its circuit_state to 2 (open) once the breaker opens, leaving the healthy providers alone', async () => {
      await insertChannel(host.dataSource, { key: 'alerts', providerKey: 'flaky', maxAttempts: 5 });
      for (const minutes of [20, 19, 18, 17]) {
        await seed('alerts', 'Failed', minutesAgo(new Date(), minutes), { outcome: 'retriable' });
      }
      const before = await scrapeMetrics(host.baseUrl);
      // Known from the first cycle's zeroed series, or absent before it: closed either way.
      expect(before.find(M.circuitState, { provider: 'flaky' }).every((m) => m.value === 0)).toBe(
        true,
      );

      const report = completed(await host.cycles.runCycle());
      const after = await scrapeMetrics(host.baseUrl);

      expect(host.app.get(ProviderCircuitBreakers).state('flaky')).toBe('open');
      expect(flaky.calls).toHaveLength(3);
      expect(after.find(M.circuitState, { provider: 'flaky' })).toEqual([
        { name: M.circuitState, labels: { provider: 'flaky' }, value: 2 },
      ]);
      // The healthy providers stay closed.
      const others = after.find(M.circuitState).filter((m) => m.labels.provider !== 'flaky');
      expect(others.length).toBeGreaterThan(0);
      expect(others.every((m) => m.value === 0)).toBe(true);
      expect(
        after.value(M.retried, { channel: 'alerts', provider: 'flaky' }) -
          before.value(M.retried, { channel: 'alerts', provider: 'flaky' }),
      ).toBe(3);
      // The fourth row is never called: claimed after the circuit opened it would be handed back,
      // claimed before it is cut at the breaker; either way no attempt is used.
      expect(report.counts).toMatchObject({ retried: 3, errors: 0 });
    });
  });

  it('labels the library’s metrics by channel and provider only: no tenant, id or personal value', async () => {
    const scrape = await scrapeMetrics(host.baseUrl);
    const ours = scrape.samples.filter((sample) => sample.name.startsWith('notifications_'));
    // Every metric of the contract has samples by now.
    expect(withoutSamples(scrape)).toEqual([]);
    const labelNames = new Set(ours.flatMap((sample) => Object.keys(sample.labels)));
    expect([...labelNames].filter((label) => !ALLOWED_LABELS.has(label))).toEqual([]);
    expect([...labelNames].filter((label) => /tenant|^id$|_id$|notification/i.test(label))).toEqual(
      [],
    );
    const labelValues = new Set(ours.flatMap((sample) => Object.values(sample.labels)));
    expect([...labelValues].filter((value) => !/^[a-z_-]+$|^[0-9]+$|^\+Inf$/.test(value))).toEqual(
      [],
    );
    // Neither the tenant, nor any notification id, nor any personal value appears anywhere in the scrape.
    expect(seededIds.filter((id) => scrape.text.includes(id))).toEqual([]);
    expect(scrape.text).not.toContain(TENANT);
    expect(leakedValues(scrape.text, marker, seeded)).toEqual([]);
  });
});
