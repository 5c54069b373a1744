import { register } from 'prom-client';
import type { DataSource } from 'typeorm';
import { RetryMetricName, RetryWorkerHealthIndicator } from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { insertChannel, insertNotification, minutesAgo } from './support/fixtures';
import { parsePrometheusText } from './support/prometheus-text';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

const YEARLY = '0 0 0 1 1 *';

/** Distinct values of the `channel` label across the library's metrics in the registry. */
async function channelLabelValues(): Promise<Set<string>> {
  const scrape = parsePrometheusText(await register.metrics());
  return new Set(
    scrape.samples
      .filter((sample) => sample.name.startsWith('notifications_'))
      .map((sample) => sample.labels.channel)
      .filter((channel): channel is string => channel !== undefined),
  );
}

async function excludedChannelsGauge(reason: string): Promise<number> {
  const scrape = parsePrometheusText(await register.metrics());
  return scrape.value(RetryMetricName.channelsExcluded, { reason });
}

/**
 * Channels the cycle leaves out for a configuration reason are visible (health,
 * metric, one summary log line), and a catalog of a thousand channels neither
 * floods the log nor grows the metric series without bound.
 */
describe('channel exclusions you can see (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let ds: DataSource;
  let app: RetryTestApp;

  beforeAll(async () => {
    ds = t.ds;
    // Present at start-up: the worker (enabled, on a schedule that will not fire) checks the catalog.
    await insertChannel(ds, { key: 'slow', timeoutMs: 600_000 });
    // One app for the file: the first test reads what it logged at start-up.
    app = await t.start({ options: { enabled: true, cron: YEARLY } });
  });

  it('warns at start-up about an enabled channel whose timeout cannot fit the lease', () => {
    // Logged while the module started, before the test cleared anything.
    expect(app.logs.events('channel-timeout-exceeds-lease')).toEqual([
      expect.objectContaining({ channel: 'slow', timeoutMs: 600_000 }),
    ]);
  });

  it('shows channels left out for a configuration reason in health, a metric and one summary line', async () => {
    await app.reset();
    await insertChannel(ds, { key: 'email' });
    await insertChannel(ds, { key: 'slow', timeoutMs: 600_000 });
    await insertChannel(ds, { key: 'orphan', providerKey: 'nobody-serves-this' });
    await insertChannel(ds, { key: 'paused', isEnabled: false });
    const now = app.clock.now();
    await insertNotification(ds, {
      channel: 'email',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });
    await insertNotification(ds, {
      channel: 'paused',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.sent).toBe(1);
    const health = await app.workerHealth.health();
    expect(health.healthy).toBe(true);
    expect(health.misconfiguredChannels).toEqual([
      { channel: 'orphan', reason: 'no-provider-adapter' },
      { channel: 'slow', reason: 'timeout-exceeds-lease' },
    ]);
    // The Terminus indicator a host registers shows them as details, and stays up.
    const indicator = await app.module.get(RetryWorkerHealthIndicator).check('retryWorker');
    expect(indicator.retryWorker).toMatchObject({
      status: 'up',
      misconfiguredChannels: health.misconfiguredChannels,
    });
    expect(await excludedChannelsGauge('timeout-exceeds-lease')).toBe(1);
    expect(await excludedChannelsGauge('no-provider-adapter')).toBe(1);
    expect(await excludedChannelsGauge('disabled')).toBe(1);
    // The disabled channel and its waiting row have the specification's line; the others theirs.
    expect(app.logs.events('channel-disabled')).toEqual([
      expect.objectContaining({
        runId: report.runId,
        channels: 1,
        dueRows: 1,
        sample: [{ channel: 'paused', dueRows: 1 }],
      }),
    ]);
    const [summary, ...more] = app.logs.events('channels-excluded');
    expect(more).toEqual([]);
    expect(summary).toEqual(
      expect.objectContaining({
        runId: report.runId,
        channels: 2,
        dueRows: 0,
        misconfigured: 2,
        byReason: {
          'no-provider-adapter': { channels: 1, dueRows: 0 },
          'timeout-exceeds-lease': { channels: 1, dueRows: 0 },
        },
      }),
    );
  });

  it('shows an invalid catalog row without due rows as not-configured, and logs it once, not every cycle', async () => {
    await app.reset();
    await insertChannel(ds, { key: 'email' });
    await insertChannel(ds, { key: 'typo', maxAttempts: 0 });

    for (let cycle = 0; cycle < 3; cycle++) completed(await app.cycles.runCycle());

    expect((await app.workerHealth.health()).misconfiguredChannels).toEqual([
      { channel: 'typo', reason: 'not-configured' },
    ]);
    expect(await excludedChannelsGauge('not-configured')).toBe(1);
    expect(app.logs.events('channel-config-invalid')).toEqual([
      expect.objectContaining({ channel: 'typo', field: 'max_attempts' }),
    ]);
  });

  it("leaves reporting channels to the lease holder: a tick skipped for the lease clears this instance's view", async () => {
    await app.reset();
    await insertChannel(ds, { key: 'orphan', providerKey: 'nobody-serves-this' });
    completed(await app.cycles.runCycle());
    expect((await app.workerHealth.health()).misconfiguredChannels).toHaveLength(1);
    expect(await excludedChannelsGauge('no-provider-adapter')).toBe(1);

    // Another instance holds the lease now.
    await ds.query(
      `UPDATE distributed_locks SET owner = 'another-instance', fencing_token = fencing_token + 1,
              expires_at = now() + interval '1 minute'`,
    );
    const skipped = await app.cycles.runCycle();

    expect(skipped).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });
    expect((await app.workerHealth.health()).misconfiguredChannels).toEqual([]);
    expect(await excludedChannelsGauge('no-provider-adapter')).toBe(0);
  });

  it('with 1,000 channels writes a bounded number of log lines per cycle and bounded channel series', async () => {
    await app.reset();
    const keys = Array.from({ length: 1_000 }, (_, i) => `ch-${String(i).padStart(4, '0')}`);
    await ds.query(
      `INSERT INTO notification_channels
         (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms, backoff_max_ms,
          backoff_multiplier, timeout_ms)
       SELECT key, n % 2 = 1, 'scripted', 3, 'Fixed', 60000, 60000, 1, 2000
         FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n)`,
      [keys],
    );
    // A due row on every disabled channel, and on a hundred enabled ones.
    const now = app.clock.now();
    await ds.query(
      `INSERT INTO notifications (channel, recipient_address, body, status, attempts, next_attempt_at)
       SELECT key, 'someone@example.org', 'body', 'Failed', 1, $2
         FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n)
        WHERE n % 2 = 0 OR n < 200`,
      [keys, minutesAgo(now, 1)],
    );

    const sentTotal = async (): Promise<number> =>
      parsePrometheusText(await register.metrics())
        .find(RetryMetricName.sent)
        .reduce((sum, sample) => sum + sample.value, 0);
    const sentBefore = await sentTotal();

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.sent).toBe(100);
    const itemLines = new Set([
      'item-sent',
      'item-retried',
      'item-deferred',
      'item-failed-terminal',
    ]);
    const otherLines = app.logs.entries.filter((entry) => {
      const event = (entry.message as { event?: unknown } | null)?.event;
      return typeof event !== 'string' || !itemLines.has(event);
    });
    // retry-cycle-started, channel-disabled, cycle-completed, and little else.
    expect(otherLines.length).toBeLessThanOrEqual(5);
    // 500 disabled channels with a row each: one line, naming the first 20 of them.
    const [disabled, ...moreDisabled] = app.logs.events('channel-disabled');
    expect(moreDisabled).toEqual([]);
    expect(disabled).toMatchObject({ channels: 500, dueRows: 500 });
    expect(disabled.sample).toHaveLength(20);
    expect(disabled.sample).toEqual(
      keys
        .filter((_, i) => i % 2 === 1)
        .slice(0, 20)
        .map((channel) => ({ channel, dueRows: 1 })),
    );
    expect(app.logs.events('channels-excluded')).toEqual([]);
    // The default bound: 50 channels with their own series, the rest summed under one.
    expect((await channelLabelValues()).size).toBeLessThanOrEqual(51);
    // The delivering channels got the label values first (not the 500 disabled ones): every send is
    // counted, some under their own channel.
    expect((await sentTotal()) - sentBefore).toBe(100);
    const sent = parsePrometheusText(await register.metrics()).find(RetryMetricName.sent);
    expect(sent.some((s) => s.value > 0 && s.labels.channel !== '_other')).toBe(true);
    for (const sample of parsePrometheusText(await register.metrics()).find(
      RetryMetricName.channelDisabledRows,
    )) {
      expect(sample.labels.channel).toBe('_other');
    }
  }, 60_000);
});
