import { Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  Clock,
  DistributedLock,
  InvalidModuleOptionsError,
  MissingLeaseFenceError,
  NotificationsRetryModule,
  RandomSource,
  RetriableDeliveryError,
  RetryCycleService,
  SystemClock,
  type ChannelCatalog,
  type ChannelConfig,
  type Lease,
  type LeaseFence,
  type NotificationsRetryExtensions,
} from '@pin/notifications-retry';
import { OPEN_FENCE } from './support/open-fence';
import { completed } from './support/cycle-reports';
import { insertNotification, minutesAgo, readNotification, resetTables } from './support/fixtures';
import { FakeClock } from './support/fake-clock';
import { adaptersModule, RecordingAlertSink } from './support/retry-test-app';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import {
  createMigratedDatabase,
  dataSourceOptions,
  type TestDatabase,
} from './support/test-database';

/** When "now" is, as a team's configuration would say; far enough ahead that the system clock never gets there. */
class FrozenTime {
  constructor(readonly at: Date) {}
}

/** The largest jitter sample: a 60 s delay becomes 72 s, so the stored time shows which source was asked. */
class MaxJitter extends RandomSource {
  next(): number {
    return 1;
  }
}

/** Grants every lease and counts the grants, so the test can see the cycle asked it. */
class CountingLock extends DistributedLock {
  acquired = 0;

  acquire(key: string, owner: string): Promise<Lease> {
    this.acquired += 1;
    return Promise.resolve({ key, owner, fencingToken: this.acquired });
  }

  readonly fence = OPEN_FENCE;

  release(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A lock written against a version without fences (or in JavaScript): `declare`
 * satisfies the compiler, and nothing is there at run time.
 */
class FencelessLock extends DistributedLock {
  declare readonly fence: LeaseFence;

  acquire(key: string, owner: string): Promise<Lease> {
    return Promise.resolve({ key, owner, fencingToken: 1 });
  }

  release(): Promise<void> {
    return Promise.resolve();
  }
}

/** A team's module that provides its own lock, for `useExisting`. */
@Module({ providers: [FencelessLock], exports: [FencelessLock] })
class TeamLockModule {}

const FROZEN_AT = new Date('2100-01-01T00:00:00.000Z');

/** A team's platform module: configuration and an alert sink the retry module reaches through `imports`. */
@Module({
  providers: [{ provide: FrozenTime, useValue: new FrozenTime(FROZEN_AT) }, RecordingAlertSink],
  exports: [FrozenTime, RecordingAlertSink],
})
class TeamPlatformModule {}

const sms: ChannelConfig = {
  key: 'sms',
  isEnabled: true,
  providerKey: 'scripted',
  maxAttempts: 2,
  backoff: { kind: 'Fixed', baseMs: 60_000, jitter: true },
  timeoutMs: 1_000,
  rateLimitPerSec: null,
  maxConcurrency: null,
};

describe('NotificationsRetryModule extensions in every Nest provider form (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let module: TestingModule | undefined;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
  });

  afterEach(async () => {
    await module?.close();
    module = undefined;
    await resetTables(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('the cycle uses a useValue catalog and lock, a useFactory clock, a useClass random source and a useExisting alert sink', async () => {
    // A plain object, not a subclass: useValue takes whatever has the extension point's shape.
    const catalog: ChannelCatalog = { getChannels: () => Promise.resolve([sms]) };
    const lock = new CountingLock();
    const extensions: NotificationsRetryExtensions = {
      channelCatalog: { useValue: catalog },
      distributedLock: { useValue: lock },
      clock: { useFactory: (time: FrozenTime) => new FakeClock(time.at), inject: [FrozenTime] },
      randomSource: { useClass: MaxJitter },
      alertSink: { useExisting: RecordingAlertSink },
    };
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(db.url)),
        NotificationsRetryModule.forRootAsync({
          imports: [TeamPlatformModule],
          useFactory: () => ({ enabled: false, concurrency: 2 }),
          extensions,
        }),
        adaptersModule([ScriptedProviderAdapter]),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
    module.get(ScriptedProviderAdapter).respondWith(() => {
      throw new RetriableDeliveryError('http_503', 'upstream unavailable');
    });
    // Due only by the frozen clock: the table has no channels, so only the catalog can name "sms".
    const due = minutesAgo(FROZEN_AT, 1);
    const retried = await insertNotification(ds, {
      channel: 'sms',
      status: 'Failed',
      nextAttemptAt: due,
    });
    const lastAttempt = await insertNotification(ds, {
      channel: 'sms',
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: due,
    });

    const report = completed(await module.get(RetryCycleService).runCycle());

    expect(report.counts).toMatchObject({ processed: 2, retried: 1, terminal: 1 });
    expect(lock.acquired).toBe(1);
    // The frozen "now" plus 60 s × (1 + 20 %) from the largest jitter sample.
    expect((await readNotification(ds, retried)).next_attempt_at).toEqual(
      new Date(FROZEN_AT.getTime() + 72_000),
    );
    expect((await readNotification(ds, lastAttempt)).status).toBe('Failed');
    expect(module.get(RecordingAlertSink).alerts.map((alert) => alert.notificationId)).toEqual([
      lastAttempt,
    ]);
  });

  it('a class given as is still replaces the default', async () => {
    class LateClock extends Clock {
      now(): Date {
        return FROZEN_AT;
      }
    }
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(db.url)),
        NotificationsRetryModule.forRoot({ enabled: false, extensions: { clock: LateClock } }),
        adaptersModule([ScriptedProviderAdapter]),
      ],
    }).compile();
    expect(module.get(Clock)).toBeInstanceOf(LateClock);
  });

  it.each<[string, NotificationsRetryExtensions['distributedLock']]>([
    ['a class given as is', FencelessLock],
    ['useClass', { useClass: FencelessLock }],
    ['useFactory', { useFactory: () => new FencelessLock() }],
    ['useExisting', { useExisting: FencelessLock }],
  ])(
    'fails start-up with MissingLeaseFenceError, saying what to implement, for a DistributedLock without a fence (%s)',
    async (_form, distributedLock) => {
      const failure = Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot(dataSourceOptions(db.url)),
          NotificationsRetryModule.forRootAsync({
            imports: [TeamLockModule],
            useFactory: () => ({ enabled: false }),
            extensions: { distributedLock },
          }),
        ],
      }).compile();

      await expect(failure).rejects.toBeInstanceOf(MissingLeaseFenceError);
      await expect(failure).rejects.toMatchObject({ code: 'missing_lease_fence' });
      await expect(failure).rejects.toThrow(
        /^The DistributedLock in use \(extensions\.distributedLock\) has no fence: got undefined\. Implement `readonly fence: LeaseFence` on it: \{ sql, params\(lease\) \}/,
      );
    },
  );

  const nowClock = new SystemClock();
  it.each<[string, unknown, string, RegExp]>([
    [
      'a misspelt form',
      { clock: { useClas: SystemClock } },
      'extensions.clock',
      /must be a class, \{ useClass \}, \{ useValue \}, \{ useFactory, inject\? \} or \{ useExisting \}.*got \{"useClas":"\[class SystemClock\]"\}/,
    ],
    [
      'a bare factory function',
      { alertSink: () => new RecordingAlertSink() },
      'extensions.alertSink',
      /a factory function goes in \{ useFactory \}; got \[function alertSink\]/,
    ],
    ['a string', { randomSource: 'math' }, 'extensions.randomSource', /got "math"$/],
    [
      'two forms at once',
      { clock: { useClass: SystemClock, useValue: nowClock } },
      'extensions.clock',
      /exactly one of them.*got \{"useClass":"\[class SystemClock\]","useValue":\{\}\}/,
    ],
    [
      'a provide token',
      { clock: { provide: Clock, useClass: SystemClock } },
      'extensions.clock.provide',
      /is filled in by the module \(Clock\); leave it out; got \[class Clock\]/,
    ],
    [
      'an undefined value',
      { channelCatalog: { useValue: undefined } },
      'extensions.channelCatalog.useValue',
      /must be a ChannelCatalog: an object with getChannels\(\); got undefined/,
    ],
    [
      'a value without the methods',
      { distributedLock: { useValue: { acquire: () => null } } },
      'extensions.distributedLock.useValue',
      /must be a DistributedLock: an object with acquire\(\), release\(\), a fence \(\{ sql, params\(\) \}\)/,
    ],
    [
      'inject that is not a list',
      { clock: { useFactory: () => nowClock, inject: 'FrozenTime' } },
      'extensions.clock.inject',
      /must be an array of injection tokens; got "FrozenTime"/,
    ],
    [
      'useExisting without a token',
      { alertSink: { useExisting: undefined } },
      'extensions.alertSink.useExisting',
      /must be an injection token \(a class, a string or a symbol\); got undefined/,
    ],
    [
      'useClass that is not a class',
      { clock: { useClass: 'SystemClock' } },
      'extensions.clock.useClass',
      /must be a class; got "SystemClock"/,
    ],
    [
      'an unknown extension point',
      { clok: SystemClock },
      'extensions.clok',
      /is not an extension point \(channelCatalog, distributedLock, clock, randomSource, alertSink, outboxPublisher\); got \[class SystemClock\]/,
    ],
    ['extensions that are not an object', 'clock', 'extensions', /must be an object.*got "clock"/],
  ])('refuses %s, naming the option and the value', (_case, extensions, option, shown) => {
    const start = () =>
      NotificationsRetryModule.forRoot({
        enabled: false,
        extensions: extensions as NotificationsRetryExtensions,
      });
    expect(start).toThrow(InvalidModuleOptionsError);
    expect(start).toThrow(`NotificationsRetryModule option "${option}" `);
    expect(start).toThrow(shown);
  });

  it('validates the extensions of forRootAsync the same way', () => {
    expect(() =>
      NotificationsRetryModule.forRootAsync({
        useFactory: () => ({ enabled: false }),
        extensions: { clock: { useClas: SystemClock } } as unknown as NotificationsRetryExtensions,
      }),
    ).toThrow(/option "extensions\.clock" must be a class/);
  });
});
