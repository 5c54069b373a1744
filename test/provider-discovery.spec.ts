import { Injectable, Scope, type Provider, type Type } from '@nestjs/common';
import {
  DuplicateProviderKeyError,
  InvalidProviderAdapterError,
  MissingProviderAdapterError,
  NotificationProvider,
  ProviderAdapter,
  type SendResult,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
  resetTables,
} from './support/fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';
import { ScriptedProviderAdapter, type ScriptedAdapter } from './support/scripted-provider-adapter';

/** A token of the team's own, as a module that provides its adapter under an interface token would use. */
const SMS_GATEWAY = Symbol('SMS_GATEWAY');

@Injectable({ scope: Scope.REQUEST })
@NotificationProvider('per-request')
class RequestScopedAdapter extends ProviderAdapter {
  send(): Promise<SendResult> {
    return Promise.resolve({ providerMessageId: 'x' });
  }
}

@NotificationProvider('not-an-adapter')
class NotAnAdapter {
  send(): Promise<SendResult> {
    return Promise.resolve({ providerMessageId: 'x' });
  }
}

/** One Nest provider form: the providers a team module lists, and the token its adapter is read back by. */
interface ProviderForm {
  readonly providers: Provider[];
  readonly token: symbol | Type<ScriptedAdapter>;
}

const forms: ReadonlyArray<[string, () => ProviderForm]> = [
  [
    'a plain class',
    () => ({ providers: [ScriptedProviderAdapter], token: ScriptedProviderAdapter }),
  ],
  [
    '{ useClass }',
    () => ({
      providers: [{ provide: SMS_GATEWAY, useClass: ScriptedProviderAdapter }],
      token: SMS_GATEWAY,
    }),
  ],
  [
    '{ useFactory }',
    () => ({
      providers: [{ provide: SMS_GATEWAY, useFactory: () => new ScriptedProviderAdapter() }],
      token: SMS_GATEWAY,
    }),
  ],
  [
    '{ useValue }',
    () => ({
      providers: [{ provide: SMS_GATEWAY, useValue: new ScriptedProviderAdapter() }],
      token: SMS_GATEWAY,
    }),
  ],
  [
    '{ useExisting } of a factory-made adapter',
    () => ({
      providers: [
        { provide: 'sms-gateway-client', useFactory: () => new ScriptedProviderAdapter() },
        { provide: SMS_GATEWAY, useExisting: 'sms-gateway-client' },
      ],
      token: SMS_GATEWAY,
    }),
  ],
];

describe('provider adapter discovery across Nest provider forms (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let app: RetryTestApp;

  afterEach(async () => {
    // The harness has closed this test's app.
    await resetTables(t.ds);
  });

  /** Where the worker runs, start-up checks that every enabled channel's provider key is served. */
  const worker = { enabled: true, cron: '0 0 0 1 1 *' };

  it.each(forms)(
    'an adapter registered as %s is found: the worker starts and the cycle delivers through it',
    async (_form, make) => {
      const { providers, token } = make();
      await insertChannel(t.ds, { key: 'sms', providerKey: 'scripted' });
      app = await t.start({ options: worker, adapters: providers });
      const adapter = app.module.get<ScriptedAdapter>(token);
      const id = await insertNotification(t.ds, {
        channel: 'sms',
        status: 'Failed',
        nextAttemptAt: minutesAgo(app.clock.now(), 1),
      });

      const report = completed(await app.cycles.runCycle());

      expect(report.counts).toMatchObject({ sent: 1, processed: 1 });
      expect((await readNotification(t.ds, id)).status).toBe('Sent');
      expect(adapter.calls.map((call) => call.message.id)).toEqual([id]);
    },
  );

  it('an instance reached through several tokens (useExisting aliases, one value twice) is one adapter, not a duplicate', async () => {
    const shared = new ScriptedProviderAdapter();
    await insertChannel(t.ds, { key: 'sms', providerKey: 'scripted' });
    app = await t.start({
      options: worker,
      adapters: [
        { provide: SMS_GATEWAY, useValue: shared },
        { provide: 'sms-gateway', useValue: shared },
        { provide: 'sms-gateway-alias', useExisting: SMS_GATEWAY },
      ],
    });
    const id = await insertNotification(t.ds, {
      channel: 'sms',
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });

    expect(completed(await app.cycles.runCycle()).counts.sent).toBe(1);
    expect(shared.calls.map((call) => call.message.id)).toEqual([id]);
  });

  it('a class and a useExisting alias of it are one adapter', async () => {
    await insertChannel(t.ds, { key: 'sms', providerKey: 'scripted' });
    app = await t.start({
      options: worker,
      adapters: [
        ScriptedProviderAdapter,
        { provide: SMS_GATEWAY, useExisting: ScriptedProviderAdapter },
      ],
    });
    expect(app.module.get(SMS_GATEWAY)).toBe(app.module.get(ScriptedProviderAdapter));
    await insertNotification(t.ds, {
      channel: 'sms',
      status: 'Failed',
      nextAttemptAt: minutesAgo(app.clock.now(), 1),
    });

    expect(completed(await app.cycles.runCycle()).counts.sent).toBe(1);
    expect(app.provider.calls).toHaveLength(1);
  });

  it('two different instances with one key fail start-up, each named with the token it was provided as', async () => {
    const failure = t.start({
      adapters: [
        ScriptedProviderAdapter,
        { provide: SMS_GATEWAY, useFactory: () => new ScriptedProviderAdapter() },
        { provide: 'backup-gateway', useValue: new ScriptedProviderAdapter() },
      ],
    });
    await expect(failure).rejects.toBeInstanceOf(DuplicateProviderKeyError);
    await expect(failure).rejects.toThrow(
      'Provider key "scripted" is claimed by more than one adapter: ScriptedProviderAdapter, ' +
        'ScriptedProviderAdapter (provided as Symbol(SMS_GATEWAY)), ' +
        'ScriptedProviderAdapter (provided as "backup-gateway")',
    );
  });

  it('a request-scoped adapter registered with useClass still fails start-up', async () => {
    const failure = t.start({
      adapters: [{ provide: SMS_GATEWAY, useClass: RequestScopedAdapter }],
    });
    await expect(failure).rejects.toBeInstanceOf(InvalidProviderAdapterError);
    await expect(failure).rejects.toThrow(
      /RequestScopedAdapter \(provided as Symbol\(SMS_GATEWAY\)\) is request-scoped/,
    );
  });

  it('a decorated class that is not a ProviderAdapter fails start-up when provided as a value too', async () => {
    const failure = t.start({
      adapters: [{ provide: 'not-an-adapter', useValue: new NotAnAdapter() }],
    });
    await expect(failure).rejects.toBeInstanceOf(InvalidProviderAdapterError);
    await expect(failure).rejects.toThrow(
      /NotAnAdapter \(provided as "not-an-adapter"\) must extend ProviderAdapter/,
    );
  });

  it('an empty key fails start-up for a factory-made adapter', async () => {
    @NotificationProvider('  ')
    class BlankKeyAdapter extends ProviderAdapter {
      send(): Promise<SendResult> {
        return Promise.resolve({ providerMessageId: 'x' });
      }
    }
    const failure = t.start({
      adapters: [{ provide: SMS_GATEWAY, useFactory: () => new BlankKeyAdapter() }],
    });
    await expect(failure).rejects.toThrow(
      /BlankKeyAdapter \(provided as Symbol\(SMS_GATEWAY\)\) needs a non-empty provider key/,
    );
  });

  it('the missing-adapter error lists the registered keys, which channels need which key, and the likely causes', async () => {
    await insertChannel(t.ds, { key: 'telegram', providerKey: 'telegram-bot' });
    await insertChannel(t.ds, { key: 'telegram-backup', providerKey: 'telegram-bot' });
    await insertChannel(t.ds, { key: 'fax', providerKey: 'fax-gateway' });
    await insertChannel(t.ds, { key: 'sms', providerKey: 'scripted' });
    await insertChannel(t.ds, { key: 'pager', providerKey: 'pager-duty', isEnabled: false });

    const failure = t.start({ options: worker });

    await expect(failure).rejects.toBeInstanceOf(MissingProviderAdapterError);
    const error = (await failure.catch((e: unknown) => e)) as MissingProviderAdapterError;
    expect([...error.missing].sort((a, b) => a.channel.localeCompare(b.channel))).toEqual([
      { channel: 'fax', providerKey: 'fax-gateway' },
      { channel: 'telegram', providerKey: 'telegram-bot' },
      { channel: 'telegram-backup', providerKey: 'telegram-bot' },
    ]);
    expect(error.registeredProviderKeys).toEqual([
      'in_app',
      'scripted',
      'stub-email',
      'stub-push',
      'stub-sms',
    ]);
    expect(error.message).toBe(
      'No registered provider adapter has the provider key that these enabled channels name: ' +
        '"fax-gateway" (channel "fax"), "telegram-bot" (channels "telegram", "telegram-backup"). ' +
        'Registered provider keys: "in_app", "scripted", "stub-email", "stub-push", "stub-sms". ' +
        'Check that the module declaring the adapter is imported by the application, that ' +
        'notification_channels.provider_key matches the key in @NotificationProvider(...) exactly, ' +
        'and that the adapter class (the class of the instance, whatever the provider form) carries ' +
        '@NotificationProvider(...); or disable the channel',
    );
    expect(error.message).not.toMatch(/declare an @NotificationProvider\(\) adapter/);
  });
});
