import {
  NonRetriableDeliveryError,
  ProviderCircuitBreakers,
  RetriableDeliveryError,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
  resetTables,
} from './support/fixtures';
import { useRetryDatabase, type RetryAppConfig, type RetryTestApp } from './support/retry-test-app';
import {
  ScriptedProviderAdapter,
  scriptedAdapterFor,
  type ScriptedAdapter,
} from './support/scripted-provider-adapter';

const FlakyAdapter = scriptedAdapterFor('flaky');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('provider handling in the cycle: circuit breaker, channel limits, jitter (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let app: RetryTestApp;
  let flaky: ScriptedAdapter;

  afterEach(async () => {
    // The harness has closed this test's app.
    await resetTables(t.ds);
  });

  async function start(options: RetryAppConfig['options'] = {}): Promise<void> {
    app = await t.start({ options, adapters: [ScriptedProviderAdapter, FlakyAdapter] });
    flaky = app.module.get(FlakyAdapter);
  }

  async function seed(channel: string, count: number, minutesOverdue: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        await insertNotification(t.ds, {
          channel,
          status: 'Failed',
          nextAttemptAt: minutesAgo(app.clock.now(), minutesOverdue + i / 100),
        }),
      );
    }
    return ids;
  }

  describe('circuit breaker', () => {
    it('in drain mode, claims the next batch without the provider whose circuit opened, so its rows cannot fill it and hide the healthy channel', async () => {
      await start({
        concurrency: 1,
        batchSize: 5,
        drain: true,
        circuitBreaker: {
          volumeThreshold: 3,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 60_000,
        },
      });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', maxAttempts: 5 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      await seed('sms', 12, 30); // older: the whole first batch
      const email = await seed('email', 12, 5);
      flaky.respondWith(() => {
        throw new RetriableDeliveryError('http_503', 'upstream unavailable');
      });

      const report = completed(await app.cycles.runCycle());

      // Three sms calls open the circuit; the two sms rows left in the batch are dropped unclaimed.
      // Every further batch is email only, until none is left.
      expect(flaky.calls).toHaveLength(3);
      expect(report.stopReason).toBe('no-more-due');
      const emailRows = await Promise.all(email.map((id) => readNotification(t.ds, id)));
      expect(emailRows.map((row) => row.status)).toEqual(Array(12).fill('Sent'));
    });

    it('opens after repeated failures, leaves that provider’s rows unclaimed, and delivers healthy channels in the same cycle', async () => {
      await start({
        concurrency: 1,
        circuitBreaker: {
          volumeThreshold: 3,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 60_000,
        },
      });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', maxAttempts: 5 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      const sms = await seed('sms', 12, 30); // older: at the head of the batch
      const email = await seed('email', 4, 5);
      flaky.respondWith(() => {
        throw new RetriableDeliveryError('http_503', 'upstream unavailable');
      });

      const report = completed(await app.cycles.runCycle());

      // Three failed calls reach the volume threshold at a 100 % failure rate: the circuit opens.
      expect(flaky.calls).toHaveLength(3);
      expect(app.module.get(ProviderCircuitBreakers).state('flaky')).toBe('open');
      expect(app.logs.events('circuit-opened')).toEqual([
        expect.objectContaining({ providerKey: 'flaky' }),
      ]);
      const smsRows = await Promise.all(sms.map((id) => readNotification(t.ds, id)));
      expect(smsRows.filter((r) => r.attempts === 1)).toHaveLength(3);
      // The rest neither burned an attempt nor were touched at all.
      expect(smsRows.filter((r) => r.attempts === 0 && r.last_error_code === null)).toHaveLength(9);
      for (const id of email) expect((await readNotification(t.ds, id)).status).toBe('Sent');
      // Only what could start was claimed: the rows not reached were never claimed, nothing to hand back.
      expect(report.counts).toMatchObject({ sent: 4, retried: 3 });

      // While open, the claim leaves the provider's channel out entirely.
      app.clock.advance(10 * 60_000);
      const whileOpen = completed(await app.cycles.runCycle());
      expect(whileOpen.excludedChannels).toEqual([
        { channel: 'sms', reason: 'circuit-open', dueRows: 12 },
      ]);
      expect(flaky.calls).toHaveLength(3);
    });

    it('lets one probe through when half-open and closes again when it succeeds', async () => {
      await start({
        concurrency: 4,
        circuitBreaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 150 },
      });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', maxAttempts: 5 });
      const sms = await seed('sms', 6, 30);
      flaky.respondWith(() => {
        throw new RetriableDeliveryError('http_503');
      });
      const breakers = app.module.get(ProviderCircuitBreakers);
      completed(await app.cycles.runCycle());
      expect(breakers.state('flaky')).toBe('open');
      const failedCalls = flaky.calls.length;

      await sleep(250);
      expect(breakers.state('flaky')).toBe('half-open');
      flaky.respondWith(async (message) => {
        await sleep(20);
        return { providerMessageId: `p-${message.id}` };
      });
      app.clock.advance(60 * 60_000);
      const report = completed(await app.cycles.runCycle());

      expect(breakers.state('flaky')).toBe('closed');
      expect(app.logs.events('circuit-closed')).toHaveLength(1);
      // The probe went alone: the second call started only after the first settled.
      const probe = flaky.calls[failedCalls];
      const next = flaky.calls[failedCalls + 1];
      expect(next.startedAt).toBeGreaterThanOrEqual(probe.settledAt!);
      expect(report.counts.sent).toBe(6);
      for (const id of sms) expect((await readNotification(t.ds, id)).status).toBe('Sent');
    });

    it('does not count non-retriable answers (a bad address) against the provider', async () => {
      await start({ concurrency: 1, circuitBreaker: { volumeThreshold: 2 } });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky' });
      await seed('sms', 5, 30);
      flaky.respondWith(() => {
        throw new NonRetriableDeliveryError('invalid_address');
      });

      const report = completed(await app.cycles.runCycle());

      expect(report.counts.terminal).toBe(5);
      expect(app.module.get(ProviderCircuitBreakers).state('flaky')).toBe('closed');
    });
  });

  describe('per-channel limits', () => {
    it('never calls a channel limited to N/s faster, while another channel proceeds', async () => {
      await start({ concurrency: 4 });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', rateLimitPerSec: 5 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      await seed('sms', 8, 30);
      await seed('email', 20, 5);
      flaky.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));

      const report = completed(await app.cycles.runCycle());

      expect(report.counts.sent).toBe(28);
      const starts = flaky.calls.map((c) => c.startedAt);
      for (let i = 1; i < starts.length; i++) {
        // 1000 / 5 = 200 ms apart; a millisecond of timer slack.
        expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(199);
      }
      for (const start of starts) {
        expect(starts.filter((s) => s >= start && s < start + 1000).length).toBeLessThanOrEqual(5);
      }
      // The limited channel did not hold the other back: all of email was done before sms's third call.
      const lastEmail = Math.max(...app.provider.calls.map((c) => c.settledAt!));
      expect(lastEmail).toBeLessThan(starts[2]);
    });

    it('keeps a channel within its max_concurrency while the worker runs others in parallel', async () => {
      await start({ concurrency: 4 });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', maxConcurrency: 1 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      await seed('sms', 6, 30);
      await seed('email', 12, 5);
      const slow = async (message: { id: string }) => {
        await sleep(30);
        return { providerMessageId: `p-${message.id}` };
      };
      flaky.respondWith(slow);
      app.provider.respondWith(slow);

      const report = completed(await app.cycles.runCycle());

      expect(report.counts.sent).toBe(18);
      expect(flaky.maxInFlight()).toBe(1);
      expect(app.provider.maxInFlight()).toBeGreaterThan(1);
    });

    it('gives a rate-limited channel no more candidates than it can send before the deadline', async () => {
      await start({ concurrency: 2, batchSize: 50, maxCycleDurationMs: 1_000 });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', rateLimitPerSec: 2 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      await seed('sms', 40, 30); // a backlog older than everything else
      const email = await seed('email', 10, 5);

      const report = completed(await app.cycles.runCycle());

      // 2/s × 1 s: two sms candidates, the rest of the batch goes to email.
      expect(flaky.calls).toHaveLength(2);
      for (const id of email) expect((await readNotification(t.ds, id)).status).toBe('Sent');
      expect(report.counts.sent).toBe(12);
    });
  });

  describe('per-channel limits at the library defaults (200 calls in flight, batch 200)', () => {
    // The default concurrency and batch size, not the test app's 4: a first claim of 200 that
    // took the limit for every channel would hand the whole batch to the oldest backlog.
    const defaults = { concurrency: undefined, batchSize: undefined };

    it('does not let an old backlog of a max_concurrency channel take the whole claim', async () => {
      await start(defaults);
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', maxConcurrency: 1 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      await seed('sms', 250, 30); // more due rows than one claim takes, older than email's
      const email = await seed('email', 20, 5);

      const report = completed(await app.cycles.runCycle());

      for (const id of email) expect((await readNotification(t.ds, id)).status).toBe('Sent');
      expect(app.provider.calls).toHaveLength(20);
      expect(flaky.maxInFlight()).toBe(1);
      expect(report.counts.sent).toBeGreaterThanOrEqual(20);
    });

    it('does not let an old backlog of a rate-limited channel take the whole claim', async () => {
      await start({ ...defaults, maxCycleDurationMs: 1_000 });
      await insertChannel(t.ds, { key: 'sms', providerKey: 'flaky', rateLimitPerSec: 2 });
      await insertChannel(t.ds, { key: 'email', providerKey: 'scripted' });
      await seed('sms', 250, 30);
      const email = await seed('email', 20, 5);

      completed(await app.cycles.runCycle());

      for (const id of email) expect((await readNotification(t.ds, id)).status).toBe('Sent');
      expect(app.provider.calls).toHaveLength(20);
      expect(flaky.calls.length).toBeLessThanOrEqual(3);
    });
  });

  describe('backoff jitter', () => {
    it('spreads the retry time by the random sample, within ±20 %, capped by backoff_max_ms', async () => {
      await start({ concurrency: 1 });
      await insertChannel(t.ds, {
        key: 'email',
        providerKey: 'scripted',
        backoffBaseMs: 60_000,
        backoffMultiplier: 2,
        backoffMaxMs: 130_000,
      });
      await insertChannel(t.ds, {
        key: 'steady',
        providerKey: 'scripted',
        backoffBaseMs: 60_000,
        backoffMultiplier: 2,
        backoffJitter: false,
      });
      const now = app.clock.now();
      const low = await insertNotification(t.ds, {
        channel: 'email',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 3),
      });
      app.provider.respondWith(() => {
        throw new RetriableDeliveryError('http_500');
      });

      app.random.sample = 0;
      completed(await app.cycles.runCycle());
      // attempts 2: 60 s × 2 = 120 s, × 0.8 at the lowest sample.
      expect((await readNotification(t.ds, low)).next_attempt_at!.getTime()).toBe(
        now.getTime() + 96_000,
      );

      const high = await insertNotification(t.ds, {
        channel: 'email',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      const steady = await insertNotification(t.ds, {
        channel: 'steady',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 1),
      });
      app.random.sample = 1;
      completed(await app.cycles.runCycle());
      // 120 s × 1.2 = 144 s, capped at 130 s; the channel without jitter gets exactly 120 s.
      expect((await readNotification(t.ds, high)).next_attempt_at!.getTime()).toBe(
        now.getTime() + 130_000,
      );
      expect((await readNotification(t.ds, steady)).next_attempt_at!.getTime()).toBe(
        now.getTime() + 120_000,
      );
    });
  });
});
