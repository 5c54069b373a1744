import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { DistributedLock } from '@pin/notifications-retry';
import { DueRowClaimer } from '../libs/notifications-retry/src/cycle/due-row-claimer';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { completed } from './support/cycle-reports';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

describe('retry cycle and the channel catalog (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    options: { batchSize: 5, concurrency: 2, stubProviders: { sms: true } },
  });
  let app: RetryTestApp;
  let ds: DataSource;

  beforeEach(() => {
    ({ app, ds } = t);
  });

  it('leaves rows of a disabled channel untouched, counts them, and sends the rest', async () => {
    await insertChannel(ds, { key: 'push', isEnabled: false });
    const now = app.clock.now();
    const waiting = await insertNotification(ds, {
      channel: 'push',
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 10),
    });
    const before = await readNotification(ds, waiting);
    const sent = await insertNotification(ds, {
      channel: 'email',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.sent).toBe(1);
    expect(report.excludedChannels).toEqual([{ channel: 'push', reason: 'disabled', dueRows: 1 }]);
    expect(await readNotification(ds, waiting)).toEqual(before);
    expect((await readNotification(ds, sent)).status).toBe('Sent');
    expect(app.provider.calls.map((c) => c.message.channel)).toEqual(['email']);
    expect(app.logs.events('channel-disabled')).toEqual([
      expect.objectContaining({
        channels: 1,
        dueRows: 1,
        sample: [{ channel: 'push', dueRows: 1 }],
        runId: report.runId,
      }),
    ]);
    expect(app.logs.events('channels-excluded')).toEqual([]);

    // Enabled again, its row is sent on the next cycle.
    await ds.query(`UPDATE notification_channels SET is_enabled = true WHERE key = 'push'`);
    completed(await app.cycles.runCycle());
    expect((await readNotification(ds, waiting)).status).toBe('Sent');
  });

  it('does not let a disabled channel with many due rows at the head take batch slots', async () => {
    await insertChannel(ds, { key: 'push', isEnabled: false });
    const now = app.clock.now();
    await ds.query(
      `INSERT INTO notifications (channel, recipient_address, body, status, attempts, next_attempt_at)
       SELECT 'push', 'device-' || g, 'body', 'Failed', 1, $1::timestamptz - g * interval '1 second'
         FROM generate_series(1, 2000) g`,
      [minutesAgo(now, 60)],
    );
    const healthy: string[] = [];
    for (let i = 0; i < 3; i++) {
      healthy.push(
        await insertNotification(ds, {
          channel: 'email',
          status: 'Failed',
          nextAttemptAt: minutesAgo(now, 1),
        }),
      );
    }

    const report = completed(await app.cycles.runCycle());

    expect(report.counts.sent).toBe(3);
    expect(report.excludedChannels).toEqual([
      { channel: 'push', reason: 'disabled', dueRows: 2000 },
    ]);
    for (const id of healthy) expect((await readNotification(ds, id)).status).toBe('Sent');
    const [{ count }] = await ds.query(
      `SELECT count(*)::int AS count FROM notifications WHERE channel = 'push' AND status = 'Failed' AND attempts = 1`,
    );
    expect(count).toBe(2000);
  });

  it('leaves rows of a channel with no catalog entry waiting', async () => {
    const now = app.clock.now();
    const orphan = await insertNotification(ds, {
      channel: 'telegram',
      status: 'Pending',
      scheduledAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.excludedChannels).toEqual([
      { channel: 'telegram', reason: 'not-configured', dueRows: 1 },
    ]);
    expect(await readNotification(ds, orphan)).toMatchObject({ status: 'Pending', attempts: 0 });
  });

  it('leaves rows of a channel whose provider has no adapter waiting', async () => {
    await insertChannel(ds, { key: 'whatsapp', providerKey: 'nobody-serves-this' });
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      channel: 'whatsapp',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.excludedChannels).toEqual([
      { channel: 'whatsapp', reason: 'no-provider-adapter', dueRows: 1 },
    ]);
    expect((await readNotification(ds, id)).attempts).toBe(0);
  });

  it('uses a built-in stub only when its feature flag is on', async () => {
    await insertChannel(ds, { key: 'sms', providerKey: 'stub-sms' });
    await insertChannel(ds, { key: 'push', providerKey: 'stub-push' });
    const now = app.clock.now();
    const sms = await insertNotification(ds, {
      channel: 'sms',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });
    const push = await insertNotification(ds, {
      channel: 'push',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(await readNotification(ds, sms)).toMatchObject({
      status: 'Sent',
      provider_message_id: `stub-sms:${sms}`,
    });
    expect((await readNotification(ds, push)).status).toBe('Failed');
    expect(report.excludedChannels).toEqual([
      { channel: 'push', reason: 'provider-disabled', dueRows: 1 },
    ]);
  });

  it('delivers in_app rows through the built-in in-app adapter', async () => {
    await insertChannel(ds, { key: 'in_app', providerKey: 'in_app' });
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      channel: 'in_app',
      status: 'Pending',
      scheduledAt: minutesAgo(now, 1),
    });

    completed(await app.cycles.runCycle());

    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Sent',
      provider_message_id: `in_app:${id}`,
    });
    expect(await outboxEvents(ds, id)).toHaveLength(1);
  });

  it.each([
    ['max_attempts below 1', { maxAttempts: 0 }, 'max_attempts'],
    ['an unknown backoff kind', { backoffKind: 'Linear' }, 'backoff_kind'],
    ['a negative base delay', { backoffBaseMs: -5 }, 'backoff_base_ms'],
    ['a max delay below the base', { backoffBaseMs: 1000, backoffMaxMs: 10 }, 'backoff_max_ms'],
    ['no timeout', { timeoutMs: null }, 'timeout_ms'],
  ])(
    'skips a channel row with %s, logs why, and carries on with the others',
    async (_label, bad, column) => {
      await insertChannel(ds, { key: 'broken', ...bad });
      const now = app.clock.now();
      const brokenRow = await insertNotification(ds, {
        channel: 'broken',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 1),
      });
      const good = await insertNotification(ds, {
        channel: 'email',
        status: 'Failed',
        nextAttemptAt: minutesAgo(now, 1),
      });

      const report = completed(await app.cycles.runCycle());

      expect((await readNotification(ds, good)).status).toBe('Sent');
      expect(await readNotification(ds, brokenRow)).toMatchObject({
        status: 'Failed',
        attempts: 1,
      });
      expect(report.excludedChannels).toEqual([
        { channel: 'broken', reason: 'not-configured', dueRows: 1 },
      ]);
      const [logged] = app.logs.events('channel-config-invalid');
      expect(logged).toMatchObject({ channel: 'broken', errorCode: 'invalid_channel_config' });
      expect(String(logged.error)).toContain(column);
    },
  );

  it('claims near the end of a lease only for channels whose claim the lease outlives', async () => {
    const lock = app.module.get(DistributedLock, { strict: false });
    const claimer = app.module.get(DueRowClaimer, { strict: false });
    const now = app.clock.now();
    const tooLong = await insertNotification(ds, {
      channel: 'email',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 5),
    });
    const fits = await insertNotification(ds, {
      channel: 'sms',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 5),
    });
    const lease = await lock.acquire('claim-near-lease-end', 'test-worker', 90_000);
    expect(lease).not.toBeNull();
    // 20 s of the lease left by the database clock: a 60 s claim would outlive it, a 2 s one fits.
    await ds.query(
      `UPDATE distributed_locks SET expires_at = statement_timestamp() + interval '20 seconds' WHERE key = $1`,
      ['claim-near-lease-end'],
    );

    const result = await claimer.claim({
      lease: lease!,
      channels: [
        { channel: 'email', quota: 5, claimMs: 60_000 },
        { channel: 'sms', quota: 5, claimMs: 2_000 },
      ],
      now,
      limit: 10,
      excluded: [],
      connectBy: performance.now() + 30_000,
    });

    expect(result.kind).toBe('claimed');
    const rows = result.kind === 'claimed' ? result.rows : [];
    expect(rows.map((r) => r.id)).toEqual([fits]);
    expect((await readNotification(ds, tooLong)).claim_token).toBeNull();
    expect((await readNotification(ds, fits)).claim_token).not.toBeNull();
  });

  it('keeps out a channel whose timeout could outlive the lease', async () => {
    await insertChannel(ds, { key: 'slow', timeoutMs: 50_000 });
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      channel: 'slow',
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });

    const report = completed(await app.cycles.runCycle());

    expect(report.excludedChannels).toEqual([
      { channel: 'slow', reason: 'timeout-exceeds-lease', dueRows: 1 },
    ]);
    expect((await readNotification(ds, id)).attempts).toBe(0);
  });

  it('passes a channel key with quotes and SQL only as a parameter', async () => {
    const key = `email'); DROP TABLE notifications; --`;
    await insertChannel(ds, { key });
    const now = app.clock.now();
    const id = await insertNotification(ds, {
      channel: key,
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });

    completed(await app.cycles.runCycle());

    expect((await readNotification(ds, id)).status).toBe('Sent');
  });
});
