import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  ChannelCatalog,
  InvalidChannelCatalogError,
  type ChannelConfig,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
} from './support/fixtures';
import { useRetryDatabase, useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

interface DriverError {
  readonly code?: string;
  readonly constraint?: string;
  readonly column?: string;
}

async function rejection(work: Promise<unknown>): Promise<DriverError> {
  try {
    await work;
  } catch (error) {
    return ((error as { driverError?: DriverError }).driverError ?? error) as DriverError;
  }
  throw new Error('the database accepted a row it should have refused');
}

/** What the team's catalog returns in the current test. */
let catalogResult: unknown = [];

/** A team's catalog from code (a config service): its entries are validated like table rows. */
@Injectable()
class TeamChannelCatalog extends ChannelCatalog {
  getChannels(): Promise<readonly ChannelConfig[]> {
    return Promise.resolve(catalogResult as ChannelConfig[]);
  }
}

const validSms = (overrides: Partial<Record<keyof ChannelConfig, unknown>> = {}): unknown => ({
  key: 'sms',
  isEnabled: true,
  providerKey: 'scripted',
  maxAttempts: 3,
  backoff: { kind: 'Fixed', baseMs: 1_000 },
  timeoutMs: 1_000,
  rateLimitPerSec: null,
  maxConcurrency: null,
  ...overrides,
});

/**
 * Bad channel configurations. Invalid `notification_channels` columns
 * (max_attempts 0, an unknown backoff kind, a negative delay, max below base,
 * no timeout) and a key holding SQL are in retry-cycle.channels.spec.ts; these
 * are the rest, and the same rules applied to what a custom ChannelCatalog returns.
 */
describe('bad input: channel configurations (real PostgreSQL)', () => {
  // One database; each describe below has its own app on it.
  const database = useRetryDatabase();

  describe('notification_channels rows (the default catalog)', () => {
    const t = useRetryTestApp({ database, options: { concurrency: 2 } });
    let app: RetryTestApp;
    let ds: DataSource;

    beforeAll(() => {
      ({ app, ds } = t);
    });

    async function expectSkippedAndOthersSent(
      badChannel: string,
      column: string,
      shown: string,
    ): Promise<void> {
      const now = app.clock.now();
      const waiting = await insertNotification(ds, {
        channel: badChannel,
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 2),
      });
      const before = await readNotification(ds, waiting);
      const ordinary = await insertNotification(ds, {
        status: 'Failed',
        nextAttemptAt: minutesAgo(now, 1),
      });

      const report = completed(await app.cycles.runCycle());

      expect(report.excludedChannels).toEqual([
        { channel: badChannel, reason: 'not-configured', dueRows: 1 },
      ]);
      const [logged] = app.logs.events('channel-config-invalid');
      expect(logged).toMatchObject({ channel: badChannel, errorCode: 'invalid_channel_config' });
      expect(String(logged.error)).toContain(column);
      expect(String(logged.error)).toContain(`got ${shown}`);
      expect(await readNotification(ds, waiting)).toEqual(before);
      expect((await readNotification(ds, ordinary)).status).toBe('Sent');
    }

    it("skips a channel whose backoff_multiplier is 'NaN' (double precision holds it) and logs it", async () => {
      await insertChannel(ds, { key: 'nan' });
      await ds.query(
        `UPDATE notification_channels SET backoff_multiplier = 'NaN' WHERE key = 'nan'`,
      );
      await expectSkippedAndOthersSent('nan', 'backoff_multiplier', 'NaN');
    });

    it("skips a channel whose rate_limit_per_sec is 'Infinity' and logs it", async () => {
      await insertChannel(ds, { key: 'inf' });
      await ds.query(
        `UPDATE notification_channels SET rate_limit_per_sec = 'Infinity' WHERE key = 'inf'`,
      );
      await expectSkippedAndOthersSent('inf', 'rate_limit_per_sec', 'Infinity');
    });

    it('skips a channel with no provider_key and logs it', async () => {
      await insertChannel(ds, { key: 'orphan', providerKey: null });
      await expectSkippedAndOthersSent('orphan', 'provider_key', 'null');
    });

    it('skips a channel whose key is blank, and logs it', async () => {
      await insertChannel(ds, { key: '  ' });
      await expectSkippedAndOthersSent('  ', 'key', '"  "');
    });

    it('trims a provider_key typed with spaces and a newline, and sends', async () => {
      await insertChannel(ds, { key: 'padded', providerKey: '  scripted\n' });
      const id = await insertNotification(ds, {
        channel: 'padded',
        status: 'Failed',
        nextAttemptAt: minutesAgo(app.clock.now(), 1),
      });
      completed(await app.cycles.runCycle());
      expect((await readNotification(ds, id)).status).toBe('Sent');
      expect(app.logs.events('channel-config-invalid')).toEqual([]);
    });

    it('refuses a null is_enabled (NOT NULL) and a duplicate key (notification_channels_pkey)', async () => {
      const nullEnabled = await rejection(
        ds.query(`INSERT INTO notification_channels (key, is_enabled) VALUES ('x', NULL)`),
      );
      expect(nullEnabled).toMatchObject({ code: '23502', column: 'is_enabled' });
      const duplicate = await rejection(insertChannel(ds, { key: 'email' }));
      expect(duplicate).toMatchObject({ code: '23505', constraint: 'notification_channels_pkey' });
    });
  });

  describe('a custom ChannelCatalog (configs from code, validated by the same rules)', () => {
    const t = useRetryTestApp({
      database,
      options: { concurrency: 2 },
      extensions: { channelCatalog: TeamChannelCatalog },
      channels: [],
    });
    let app: RetryTestApp;
    let ds: DataSource;

    beforeAll(() => {
      ({ app, ds } = t);
    });

    async function dueRow(channel: string): Promise<string> {
      return insertNotification(ds, {
        channel,
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(app.clock.now(), 1),
      });
    }

    it.each<[string, unknown, string, string]>([
      ['maxAttempts 0', validSms({ key: 'push', maxAttempts: 0 }), 'maxAttempts', '0'],
      ['timeoutMs NaN', validSms({ key: 'push', timeoutMs: NaN }), 'timeoutMs', 'NaN'],
      ['isEnabled "yes"', validSms({ key: 'push', isEnabled: 'yes' }), 'isEnabled', '"yes"'],
      [
        'an Exponential backoff without a cap',
        validSms({ key: 'push', backoff: { kind: 'Exponential', baseMs: 1, multiplier: 2 } }),
        'backoff.maxMs',
        'null',
      ],
    ])(
      'skips an entry with %s as InvalidChannelConfigError, logs it, and sends the valid channel',
      async (_label, bad, field, shown) => {
        catalogResult = [bad, validSms()];
        const waiting = await dueRow('push');
        const before = await readNotification(ds, waiting);
        const ordinary = await dueRow('sms');

        const report = completed(await app.cycles.runCycle());

        expect(report.excludedChannels).toEqual([
          { channel: 'push', reason: 'not-configured', dueRows: 1 },
        ]);
        expect(app.logs.events('channel-config-invalid')).toEqual([
          expect.objectContaining({
            catalog: 'TeamChannelCatalog',
            channel: 'push',
            field,
            errorCode: 'invalid_channel_config',
            error: expect.stringMatching(
              new RegExp(
                `^ChannelCatalog TeamChannelCatalog channel "push": ${field} .*got ${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
              ),
            ),
          }),
        ]);
        expect(await readNotification(ds, waiting)).toEqual(before);
        expect((await readNotification(ds, ordinary)).status).toBe('Sent');
      },
    );

    it('fails the cycle with InvalidChannelCatalogError when the catalog returns no array, touching nothing', async () => {
      catalogResult = { sms: validSms() };
      const id = await dueRow('sms');
      const before = await readNotification(ds, id);

      await expect(app.cycles.runCycle()).rejects.toBeInstanceOf(InvalidChannelCatalogError);
      expect(app.provider.calls).toHaveLength(0);
      expect(await readNotification(ds, id)).toEqual(before);
      const [lease] = await ds.query(
        `SELECT expires_at <= now() AS released FROM distributed_locks`,
      );
      expect(lease.released).toBe(true);

      catalogResult = [validSms()];
      completed(await app.cycles.runCycle());
      expect((await readNotification(ds, id)).status).toBe('Sent');
    });
  });
});
