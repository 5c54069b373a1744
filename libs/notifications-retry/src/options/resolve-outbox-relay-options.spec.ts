import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import { resolveOptions } from './resolve-options';
import { resolveOutboxRelayOptions } from './resolve-outbox-relay-options';

describe('resolveOutboxRelayOptions', () => {
  it('is off by default, with defaults that fit together', () => {
    const resolved = resolveOptions({}).outboxRelay;
    expect(resolved).toEqual({
      enabled: false,
      batchSize: 100,
      pollIntervalMs: 5_000,
      publishTimeoutMs: 10_000,
      claimTtlMs: 30_000,
      backoffBaseMs: 1_000,
      backoffMaxMs: 60_000,
      retentionMs: 7 * 86_400_000,
      retentionBatchSize: 500,
      retentionIntervalMs: 60_000,
    });
  });

  it.each([
    [
      { enabled: 'yes' },
      'outboxRelay.enabled',
      'NotificationsRetryModule option "outboxRelay.enabled" must be a boolean; got "yes"',
    ],
    [
      { batchSize: 0 },
      'outboxRelay.batchSize',
      'NotificationsRetryModule option "outboxRelay.batchSize" must be an integer from 1 to 1000; got 0',
    ],
    [
      { pollIntervalMs: 1.5 },
      'outboxRelay.pollIntervalMs',
      'must be an integer from 10 to 600000; got 1.5',
    ],
    [
      { publishTimeoutMs: 10_000, claimTtlMs: 11_000 },
      'outboxRelay.claimTtlMs',
      'must exceed publishTimeoutMs (10000) + 2000 ms = 12000',
    ],
    [
      { backoffBaseMs: 5_000, backoffMaxMs: 1_000 },
      'outboxRelay.backoffMaxMs',
      'must be at least backoffBaseMs (5000); got 1000',
    ],
    [
      { publishTimeoutMs: 10_000, claimTtlMs: 12_000 },
      'outboxRelay.claimTtlMs',
      'must exceed publishTimeoutMs (10000) + 2000 ms = 12000, or a claim could lapse while its publish is still being recorded',
    ],
    [{ batchSize: 1_001 }, 'outboxRelay.batchSize', 'must be an integer from 1 to 1000; got 1001'],
    [
      { retentionMs: 1_000 },
      'outboxRelay.retentionMs',
      'must be an integer from 60000 to 315360000000; got 1000',
    ],
    [
      { retentionMs: 3_650 * 86_400_000 + 1 },
      'outboxRelay.retentionMs',
      'must be an integer from 60000 to 315360000000; got 315360000001',
    ],
    [{ batchsize: 10 }, 'outboxRelay.batchsize', 'is not a known option (a typo?); got 10'],
  ])('refuses %j naming the option and the value', (value, option, message) => {
    let thrown: unknown;
    try {
      resolveOutboxRelayOptions(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidModuleOptionsError);
    expect((thrown as InvalidModuleOptionsError).option).toBe(option);
    expect((thrown as Error).message).toContain(message);
  });

  it('refuses a value that is not an object', () => {
    expect(() => resolveOptions({ outboxRelay: true as never })).toThrow(
      'NotificationsRetryModule option "outboxRelay" must be an object; got true',
    );
    for (const value of [null, [], 'on']) {
      expect(() => resolveOutboxRelayOptions(value)).toThrow(
        /option "outboxRelay" must be an object; got /,
      );
    }
  });

  it('accepts the values at the edges of every rule', () => {
    expect(
      resolveOutboxRelayOptions({
        batchSize: 1,
        publishTimeoutMs: 10_000,
        claimTtlMs: 12_001,
        backoffBaseMs: 5_000,
        backoffMaxMs: 5_000,
        retentionMs: 3_650 * 86_400_000,
      }),
    ).toMatchObject({
      batchSize: 1,
      claimTtlMs: 12_001,
      backoffBaseMs: 5_000,
      backoffMaxMs: 5_000,
      retentionMs: 315_360_000_000,
    });
    expect(resolveOutboxRelayOptions({ batchSize: 1_000 }).batchSize).toBe(1_000);
  });
});
