import { Injectable, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  ChannelCatalog,
  DuplicateProviderKeyError,
  InsufficientPoolSizeError,
  InvalidModuleOptionsError,
  InvalidProviderAdapterError,
  MissingProviderAdapterError,
  NotificationProvider,
  NotificationsRetryModule,
  ProviderAdapter,
  RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
  type ChannelConfig,
  type NotificationsRetryModuleOptions,
  type ResolvedNotificationsRetryOptions,
  type SendResult,
} from '@pin/notifications-retry';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
} from './support/fixtures';
import { adaptersModule, useRetryDatabase } from './support/retry-test-app';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { dataSourceOptions } from './support/test-database';

@Injectable()
@NotificationProvider('scripted')
class SecondScriptedAdapter extends ProviderAdapter {
  send(): Promise<SendResult> {
    return Promise.resolve({ providerMessageId: 'second' });
  }
}

@Injectable({ scope: Scope.REQUEST })
@NotificationProvider('per-request')
class RequestScopedAdapter extends ProviderAdapter {
  send(): Promise<SendResult> {
    return Promise.resolve({ providerMessageId: 'x' });
  }
}

@Injectable()
@NotificationProvider('not-an-adapter')
class NotAnAdapter {
  send(): Promise<SendResult> {
    return Promise.resolve({ providerMessageId: 'x' });
  }
}

/** A catalog from code, as a team with a config service would provide. */
@Injectable()
class StaticChannelCatalog extends ChannelCatalog {
  getChannels(): Promise<readonly ChannelConfig[]> {
    return Promise.resolve([
      {
        key: 'sms',
        isEnabled: true,
        providerKey: 'scripted',
        maxAttempts: 2,
        backoff: { kind: 'Fixed', baseMs: 1_000 },
        timeoutMs: 1_000,
        rateLimitPerSec: null,
        maxConcurrency: null,
      },
    ]);
  }
}

describe('NotificationsRetryModule start-up (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let ds: DataSource;

  beforeAll(() => {
    ds = t.ds;
  });

  /**
   * The module as a host imports it, nothing of the harness's (no schedule, clock or sink
   * overrides, no logger): built, started and closed here, so it resolves to nothing.
   */
  async function boot(
    options: NotificationsRetryModuleOptions,
    adapters: unknown[] = [ScriptedProviderAdapter],
    poolSize = 20,
  ) {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(t.db.url, { extra: { max: poolSize } })),
        NotificationsRetryModule.forRoot({ enabled: false, ...options }),
        adaptersModule(adapters as never[]),
      ],
    }).compile();
    module.useLogger(false);
    try {
      await module.init();
    } finally {
      await module.close();
    }
  }

  it.each([
    [{ lockTtlMs: 30_000 }, 'lockTtlMs', '30000'],
    [{ batchSize: 0 }, 'batchSize', '0'],
    [{ concurrency: 2.5 }, 'concurrency', '2.5'],
    [{ cron: 'every minute' }, 'cron', '"every minute"'],
    [{ batchsize: 100 } as NotificationsRetryModuleOptions, 'batchsize', '100'],
  ])(
    'refuses to start with %j and names the option and the value',
    async (options, option, shown) => {
      const failure = boot(options);
      await expect(failure).rejects.toBeInstanceOf(InvalidModuleOptionsError);
      await expect(failure).rejects.toThrow(
        new RegExp(`"${option}".*${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
    },
  );

  it('validates forRootAsync options the same way', async () => {
    const module = Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(t.db.url)),
        NotificationsRetryModule.forRootAsync({
          useFactory: () => ({ enabled: false, maxCycleDurationMs: 100_000 }),
        }),
      ],
    }).compile();
    await expect(module).rejects.toThrow(
      /"lockTtlMs" must exceed maxCycleDurationMs \(100000\) \+ settleMarginMs \(2000\).*got 90000/,
    );
  });

  it('resolves forRootAsync options with the documented defaults', async () => {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(t.db.url)),
        NotificationsRetryModule.forRootAsync({ useFactory: () => ({ enabled: false }) }),
      ],
    }).compile();
    const resolved = module.get<ResolvedNotificationsRetryOptions>(
      RESOLVED_NOTIFICATIONS_RETRY_OPTIONS,
    );
    expect(resolved).toMatchObject({
      enabled: false,
      batchSize: 200,
      lockKey: 'notifications:retry-worker',
      lockTtlMs: 90_000,
      maxCycleDurationMs: 45_000,
      cron: '0 * * * * *',
    });
    expect(resolved.concurrency).toBeGreaterThan(1);
    await module.close();
  });

  it('fails start-up when two adapters claim one provider key, naming both', async () => {
    const failure = boot({}, [ScriptedProviderAdapter, SecondScriptedAdapter]);
    await expect(failure).rejects.toBeInstanceOf(DuplicateProviderKeyError);
    await expect(failure).rejects.toThrow(
      /"scripted".*ScriptedProviderAdapter, SecondScriptedAdapter/,
    );
  });

  it('fails start-up for a request-scoped adapter', async () => {
    await expect(boot({}, [RequestScopedAdapter])).rejects.toThrow(InvalidProviderAdapterError);
    await expect(boot({}, [RequestScopedAdapter])).rejects.toThrow(
      /RequestScopedAdapter is request-scoped/,
    );
  });

  it('fails start-up for a decorated class that is not a ProviderAdapter', async () => {
    await expect(boot({}, [NotAnAdapter])).rejects.toThrow(
      /NotAnAdapter must extend ProviderAdapter/,
    );
  });

  it('fails start-up when the pool cannot run a claim and an outcome write at once', async () => {
    const failure = boot({ concurrency: 8 }, [ScriptedProviderAdapter], 1);
    await expect(failure).rejects.toBeInstanceOf(InsufficientPoolSizeError);
    await expect(failure).rejects.toThrow(
      /needs a database pool of at least 2 connections \(a claim and an outcome write at once\); the DataSource pool has 1/,
    );
  });

  it('starts with far more calls in flight than pooled connections: calls hold none', async () => {
    await expect(
      boot({ concurrency: 2_000 }, [ScriptedProviderAdapter], 4),
    ).resolves.toBeUndefined();
  });

  it('fails start-up when an enabled channel names a provider key no adapter serves', async () => {
    await insertChannel(ds, { key: 'telegram', providerKey: 'telegram-bot' });
    await insertChannel(ds, { key: 'fax', providerKey: 'fax-gateway', isEnabled: false });
    // A built-in stub with its flag off is served, just switched off: not a start-up error.
    await insertChannel(ds, { key: 'push', providerKey: 'stub-push' });
    // Only where the worker runs: instances that import the module with the worker off start fine.
    await expect(boot({ enabled: false })).resolves.toBeUndefined();
    const worker = { enabled: true, cron: '0 0 0 1 1 *' };
    try {
      const failure = boot(worker);
      await expect(failure).rejects.toBeInstanceOf(MissingProviderAdapterError);
      await expect(failure).rejects.toThrow(
        /^No registered provider adapter has the provider key that these enabled channels name: "telegram-bot" \(channel "telegram"\)\. Registered provider keys: "in_app", "scripted", /,
      );
    } finally {
      await ds.query(`DELETE FROM notification_channels WHERE key = 'telegram'`);
    }
    await expect(boot(worker)).resolves.toBeUndefined();
    await ds.query('DELETE FROM notification_channels');
  });

  it('where the worker runs, decides at start whether statements are named, and logs why', async () => {
    const app = await t.start({ options: { enabled: true, cron: '0 0 0 1 1 *' } });
    // Before any cycle: a direct connection, so the server's own backend key.
    expect(app.logs.events('prepared-statements')).toEqual([
      expect.objectContaining({
        named: true,
        reason: 'direct-connection',
        preparedStatements: 'auto',
      }),
    ]);
  });

  it('uses a ChannelCatalog a team provides instead of the table', async () => {
    const app = await t.start({ extensions: { channelCatalog: StaticChannelCatalog } });
    const id = await insertNotification(ds, {
      channel: 'sms',
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });
    const report = await app.cycles.runCycle();
    expect(report).toMatchObject({ status: 'completed', counts: { sent: 1 } });
    expect((await readNotification(ds, id)).status).toBe('Sent');
  });
});
