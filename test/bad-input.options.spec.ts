import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  InvalidModuleOptionsError,
  NotificationsRetryModule,
  type NotificationsRetryModuleOptions,
} from '@pin/notifications-retry';

/**
 * Start-up refuses these options before anything touches the database, so a
 * stand-in DataSource is enough (and no real connection is left retrying in
 * the background once compile() has failed).
 */
@Global()
@Module({
  providers: [{ provide: DataSource, useValue: { options: {} } }],
  exports: [DataSource],
})
class NoDatabaseModule {}

/**
 * Module options a host could plausibly get wrong, at start-up. The option
 * rules themselves are unit-tested in resolve-options.spec.ts and the common
 * start-up refusals (TTL, batchSize 0, fractional concurrency, bad cron, a
 * typo) in module-startup.spec.ts; these are the ones a deployment hits:
 * values read from the environment, a factory that fails, nested options.
 */
describe('bad input: module options at start-up', () => {
  async function bootAsync(factory: () => Promise<NotificationsRetryModuleOptions>): Promise<void> {
    const module = await Test.createTestingModule({
      imports: [NoDatabaseModule, NotificationsRetryModule.forRootAsync({ useFactory: factory })],
    }).compile();
    module.useLogger(false);
    await module.close();
  }

  it.each<[string, Record<string, unknown>, string, string]>([
    // process.env values are strings; a host that forgets Number() must hear about it.
    ['batchSize read from the environment as a string', { batchSize: '200' }, 'batchSize', '"200"'],
    ['enabled read from the environment as "false"', { enabled: 'false' }, 'enabled', '"false"'],
    ['a negative shutdown grace', { shutdownGraceMs: -1 }, 'shutdownGraceMs', '-1'],
    ['healthStaleMultiple 0', { healthStaleMultiple: 0 }, 'healthStaleMultiple', '0'],
    ['concurrency Infinity', { concurrency: Infinity }, 'concurrency', 'Infinity'],
    [
      'a circuit threshold above 100 %',
      { circuitBreaker: { errorThresholdPercentage: 150 } },
      'circuitBreaker.errorThresholdPercentage',
      '150',
    ],
  ])('refuses %s with InvalidModuleOptionsError naming it', async (_label, raw, option, shown) => {
    const failure = bootAsync(() => Promise.resolve(raw as NotificationsRetryModuleOptions));
    await expect(failure).rejects.toBeInstanceOf(InvalidModuleOptionsError);
    await expect(failure).rejects.toMatchObject({ option, code: 'invalid_module_options' });
    await expect(failure).rejects.toThrow(`got ${shown}`);
  });

  it("passes a failing options factory's own error through (the host's config service is down)", async () => {
    await expect(
      bootAsync(() => Promise.reject(new Error('config service unreachable'))),
    ).rejects.toThrow('config service unreachable');
  });
});
