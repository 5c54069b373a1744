import { hostname } from 'node:os';
import { validateCronExpression } from 'cron';
import { Registry, register } from 'prom-client';
import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import { NotificationsRetryError } from '../errors/notifications-retry.error';
import type { NotificationsRetryModuleOptions } from './notifications-retry-options';
import { resolveOutboxRelayOptions } from './resolve-outbox-relay-options';
import { DEFAULT_LOCK_KEY, resolveOptions } from './resolve-options';

/** Calls resolveOptions and returns what it threw; fails the test if it did not throw. */
function optionsError(raw: unknown): InvalidModuleOptionsError {
  let thrown: unknown;
  try {
    resolveOptions(raw as NotificationsRetryModuleOptions);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidModuleOptionsError);
  return thrown as InvalidModuleOptionsError;
}

describe('resolveOptions', () => {
  describe('defaults', () => {
    it.each([
      ['undefined', undefined],
      ['an empty object', {}],
    ])('applies the documented defaults for %s', (_label, raw) => {
      const options = resolveOptions(raw);
      expect(options.enabled).toBe(true);
      expect(options.batchSize).toBe(200);
      expect(options.lockTtlMs).toBe(90_000);
      expect(options.maxCycleDurationMs).toBe(45_000);
      expect(options.lockKey).toBe('notifications:retry-worker');
      expect(options.stubProviders).toEqual({ email: false, sms: false, push: false });
      // Detected at start: named statements unless a pooler sits in front of PostgreSQL.
      expect(options.preparedStatements).toBe('auto');
      expect(options.settleMarginMs).toBe(2_000);
      expect(options.cycleLogRetentionMs).toBe(7 * 24 * 3_600_000);
    });

    it('exports the default lock key of the design', () => {
      expect(DEFAULT_LOCK_KEY).toBe('notifications:retry-worker');
    });

    it('runs rows concurrently by default, within sane bounds', () => {
      const { concurrency } = resolveOptions({});
      expect(Number.isInteger(concurrency)).toBe(true);
      // Calls hold no connection: far more in flight than the default pool (10) has connections.
      expect(concurrency).toBe(200);
    });

    it('schedules a valid six-field cron that fires once a minute, at second 0', () => {
      const { cron } = resolveOptions({});
      expect(validateCronExpression(cron).valid).toBe(true);
      const fields = cron.trim().split(/\s+/);
      expect(fields).toHaveLength(6);
      expect(fields[0]).toBe('0');
      expect(fields.slice(1)).toEqual(['*', '*', '*', '*', '*']);
    });

    it('keeps the lease TTL above the cycle deadline', () => {
      const { lockTtlMs, maxCycleDurationMs } = resolveOptions({});
      expect(lockTtlMs).toBeGreaterThan(maxCycleDurationMs);
    });

    it('makes a default instance id from the host name and the pid, unique per call', () => {
      const a = resolveOptions({}).instanceId;
      const b = resolveOptions({}).instanceId;
      expect(a).toContain(hostname());
      expect(a).toContain(String(process.pid));
      expect(a).not.toBe(b);
    });

    it('treats an option set to undefined as absent', () => {
      expect(resolveOptions({ batchSize: undefined, cron: undefined }).batchSize).toBe(200);
    });
  });

  describe('explicit values', () => {
    it('passes valid values through', () => {
      const options = resolveOptions({
        enabled: false,
        cron: '*/30 * * * * *',
        batchSize: 50,
        concurrency: 1,
        preparedStatements: false,
        lockKey: 'custom:lock',
        lockTtlMs: 20_000,
        maxCycleDurationMs: 10_000,
        instanceId: 'worker-a',
        settleMarginMs: 500,
        cycleLogRetentionMs: 3_600_000,
        stubProviders: { email: true, push: false },
        circuitBreaker: { enabled: false, volumeThreshold: 3, resetTimeoutMs: 5_000 },
      });
      expect(options).toEqual({
        enabled: false,
        cron: '*/30 * * * * *',
        batchSize: 50,
        drain: false,
        concurrency: 1,
        preparedStatements: false,
        lockKey: 'custom:lock',
        lockTtlMs: 20_000,
        maxCycleDurationMs: 10_000,
        instanceId: 'worker-a',
        shutdownGraceMs: 10_000,
        settleMarginMs: 500,
        healthStaleMultiple: 3,
        cycleLogRetentionMs: 3_600_000,
        // */30 seconds: runs 30 s apart.
        scheduleIntervalMs: 30_000,
        stubProviders: { email: true, sms: false, push: false },
        circuitBreaker: {
          enabled: false,
          errorThresholdPercentage: 50,
          volumeThreshold: 3,
          resetTimeoutMs: 5_000,
          rollingWindowMs: 120_000,
        },
        metrics: { registry: register, maxLabelValues: 50 },
        outboxRelay: resolveOutboxRelayOptions(undefined),
      });
    });

    it.each([true, false, 'auto'] as const)('accepts preparedStatements %p', (value) => {
      expect(resolveOptions({ preparedStatements: value }).preparedStatements).toBe(value);
    });

    it('says which preparedStatements values exist', () => {
      expect(optionsError({ preparedStatements: 1 }).message).toBe(
        `NotificationsRetryModule option "preparedStatements" must be true, false or 'auto'; got 1`,
      );
    });

    it('accepts a TTL one millisecond above the deadline, the settle margin and the write allowance', () => {
      // 45 s deadline + 2 s settle margin + 5 s for the last write, and a millisecond for a call.
      expect(resolveOptions({ lockTtlMs: 52_001 }).lockTtlMs).toBe(52_001);
      expect(() => resolveOptions({ lockTtlMs: 52_000 })).toThrow(
        /"lockTtlMs" must exceed maxCycleDurationMs \(45000\) \+ settleMarginMs \(2000\) \+ 5000 ms = 52000/,
      );
      expect(() => resolveOptions({ lockTtlMs: 60_000, settleMarginMs: 10_000 })).toThrow(
        /"lockTtlMs" must exceed .*= 60000/,
      );
    });

    it('accepts the options that the first example leaves at their defaults', () => {
      const registry = new Registry();
      const options = resolveOptions({
        drain: true,
        shutdownGraceMs: 0,
        healthStaleMultiple: 1_000,
        batchSize: 10_000,
        stubProviders: {},
        circuitBreaker: { errorThresholdPercentage: 100, rollingWindowMs: 24 * 3_600_000 },
        metrics: { registry, maxLabelValues: 20 },
      });
      expect(options).toMatchObject({
        drain: true,
        shutdownGraceMs: 0,
        healthStaleMultiple: 1_000,
        batchSize: 10_000,
        stubProviders: { email: false, sms: false, push: false },
        circuitBreaker: { errorThresholdPercentage: 100, rollingWindowMs: 86_400_000 },
        metrics: { maxLabelValues: 20 },
      });
      expect(options.metrics.registry).toBe(registry);
      expect(resolveOptions({ stubProviders: { sms: true } }).stubProviders).toEqual({
        email: false,
        sms: true,
        push: false,
      });
    });

    it('does not mutate the options object it is given', () => {
      const raw = { batchSize: 10 };
      resolveOptions(raw);
      expect(raw).toEqual({ batchSize: 10 });
    });
  });

  describe('invalid options', () => {
    const cases: ReadonlyArray<{
      name: string;
      raw: unknown;
      option: string;
      value: unknown;
      shown: string;
      /** The whole requirement the message states (a rule with numbers: its start). */
      requirement: string | RegExp;
    }> = [
      {
        name: 'unknown key (typo)',
        requirement: 'is not a known option (a typo?)',
        raw: { batchsize: 100 },
        option: 'batchsize',
        value: 100,
        shown: '100',
      },
      {
        name: 'unknown key set to undefined',
        requirement: 'is not a known option (a typo?)',
        raw: { lockTTL: undefined },
        option: 'lockTTL',
        value: undefined,
        shown: 'undefined',
      },
      {
        name: 'non-integer batchSize',
        requirement: 'must be an integer from 1 to 10000',
        raw: { batchSize: 12.5 },
        option: 'batchSize',
        value: 12.5,
        shown: '12.5',
      },
      {
        name: 'string batchSize',
        requirement: 'must be an integer from 1 to 10000',
        raw: { batchSize: '200' },
        option: 'batchSize',
        value: '200',
        shown: '"200"',
      },
      {
        name: 'batchSize 0',
        requirement: 'must be an integer from 1 to 10000',
        raw: { batchSize: 0 },
        option: 'batchSize',
        value: 0,
        shown: '0',
      },
      {
        name: 'metrics.maxLabelValues 0',
        requirement: 'must be an integer from 1 to 10000',
        raw: { metrics: { maxLabelValues: 0 } },
        option: 'metrics.maxLabelValues',
        value: 0,
        shown: '0',
      },
      {
        name: 'unknown metrics key',
        requirement: 'is not a known option (a typo?)',
        raw: { metrics: { registery: {} } },
        option: 'metrics.registery',
        value: {},
        shown: '{}',
      },
      {
        name: 'negative settleMarginMs',
        requirement: 'must be an integer from 0 to 600000',
        raw: { settleMarginMs: -1 },
        option: 'settleMarginMs',
        value: -1,
        shown: '-1',
      },
      {
        name: 'non-integer settleMarginMs',
        requirement: 'must be an integer from 0 to 600000',
        raw: { settleMarginMs: 1.5 },
        option: 'settleMarginMs',
        value: 1.5,
        shown: '1.5',
      },
      {
        name: 'negative batchSize',
        requirement: 'must be an integer from 1 to 10000',
        raw: { batchSize: -5 },
        option: 'batchSize',
        value: -5,
        shown: '-5',
      },
      {
        name: 'concurrency 0',
        requirement: 'must be an integer from 1 to 10000',
        raw: { concurrency: 0 },
        option: 'concurrency',
        value: 0,
        shown: '0',
      },
      {
        name: 'non-integer concurrency',
        requirement: 'must be an integer from 1 to 10000',
        raw: { concurrency: 2.5 },
        option: 'concurrency',
        value: 2.5,
        shown: '2.5',
      },
      {
        name: 'bad cron string',
        requirement: 'must be a valid cron expression',
        raw: { cron: 'every minute' },
        option: 'cron',
        value: 'every minute',
        shown: '"every minute"',
      },
      {
        name: 'cron with an out-of-range field',
        requirement: 'must be a valid cron expression',
        raw: { cron: '61 * * * * *' },
        option: 'cron',
        value: '61 * * * * *',
        shown: '"61 * * * * *"',
      },
      {
        name: 'empty cron',
        requirement: 'must be a non-empty string',
        raw: { cron: '' },
        option: 'cron',
        value: '',
        shown: '""',
      },
      {
        name: 'lockTtlMs equal to maxCycleDurationMs',
        requirement: /^must exceed maxCycleDurationMs \(\d+\) \+ settleMarginMs/,
        raw: { lockTtlMs: 45_000 },
        option: 'lockTtlMs',
        value: 45_000,
        shown: '45000',
      },
      {
        name: 'lockTtlMs below maxCycleDurationMs',
        requirement: /^must exceed maxCycleDurationMs \(\d+\) \+ settleMarginMs/,
        raw: { lockTtlMs: 30_000, maxCycleDurationMs: 60_000 },
        option: 'lockTtlMs',
        value: 30_000,
        shown: '30000',
      },
      {
        name: 'lockTtlMs 0',
        requirement: 'must be an integer from 1 to 86400000',
        raw: { lockTtlMs: 0 },
        option: 'lockTtlMs',
        value: 0,
        shown: '0',
      },
      {
        name: 'maxCycleDurationMs 0',
        requirement: 'must be an integer from 1 to 86400000',
        raw: { maxCycleDurationMs: 0 },
        option: 'maxCycleDurationMs',
        value: 0,
        shown: '0',
      },
      {
        name: 'blank lockKey',
        requirement: 'must be a non-empty string',
        raw: { lockKey: '  ' },
        option: 'lockKey',
        value: '  ',
        shown: '"  "',
      },
      {
        name: 'cycleLogRetentionMs under a minute',
        requirement: 'must be an integer from 60000 to 31622400000',
        raw: { cycleLogRetentionMs: 59_999 },
        option: 'cycleLogRetentionMs',
        value: 59_999,
        shown: '59999',
      },
      {
        name: 'fractional cycleLogRetentionMs',
        requirement: 'must be an integer from 60000 to 31622400000',
        raw: { cycleLogRetentionMs: 86_400_000.5 },
        option: 'cycleLogRetentionMs',
        value: 86_400_000.5,
        shown: '86400000.5',
      },
      {
        name: 'non-string instanceId',
        requirement: 'must be a non-empty string',
        raw: { instanceId: 42 },
        option: 'instanceId',
        value: 42,
        shown: '42',
      },
      {
        name: 'preparedStatements neither a boolean nor "auto"',
        requirement: "must be true, false or 'auto'",
        raw: { preparedStatements: 'off' },
        option: 'preparedStatements',
        value: 'off',
        shown: '"off"',
      },
      {
        name: 'preparedStatements "AUTO" (case matters)',
        requirement: "must be true, false or 'auto'",
        raw: { preparedStatements: 'AUTO' },
        option: 'preparedStatements',
        value: 'AUTO',
        shown: '"AUTO"',
      },
      {
        name: 'preparedStatements null',
        requirement: "must be true, false or 'auto'",
        raw: { preparedStatements: null },
        option: 'preparedStatements',
        value: null,
        shown: 'null',
      },
      {
        name: 'non-boolean enabled',
        requirement: 'must be a boolean',
        raw: { enabled: 'yes' },
        option: 'enabled',
        value: 'yes',
        shown: '"yes"',
      },
      {
        name: 'stubProviders not an object',
        requirement: 'must be an object of booleans',
        raw: { stubProviders: true },
        option: 'stubProviders',
        value: true,
        shown: 'true',
      },
      {
        name: 'stubProviders null',
        requirement: 'must be an object of booleans',
        raw: { stubProviders: null },
        option: 'stubProviders',
        value: null,
        shown: 'null',
      },
      {
        name: 'stubProviders an array',
        requirement: 'must be an object of booleans',
        raw: { stubProviders: ['email'] },
        option: 'stubProviders',
        value: ['email'],
        shown: '["email"]',
      },
      {
        name: 'unknown stub',
        requirement: 'is not a known stub (email, sms, push)',
        raw: { stubProviders: { fax: true } },
        option: 'stubProviders.fax',
        value: true,
        shown: 'true',
      },
      {
        name: 'non-boolean stub flag',
        requirement: 'must be a boolean',
        raw: { stubProviders: { sms: 'on' } },
        option: 'stubProviders.sms',
        value: 'on',
        shown: '"on"',
      },
      {
        name: 'non-boolean drain',
        raw: { drain: 1 },
        option: 'drain',
        value: 1,
        shown: '1',
        requirement: 'must be a boolean',
      },
      {
        name: 'healthStaleMultiple 0',
        raw: { healthStaleMultiple: 0 },
        option: 'healthStaleMultiple',
        value: 0,
        shown: '0',
        requirement: 'must be an integer from 1 to 1000',
      },
      {
        name: 'negative shutdownGraceMs',
        raw: { shutdownGraceMs: -1 },
        option: 'shutdownGraceMs',
        value: -1,
        shown: '-1',
        requirement: 'must be an integer from 0 to 3600000',
      },
      {
        name: 'batchSize one above its maximum',
        raw: { batchSize: 10_001 },
        option: 'batchSize',
        value: 10_001,
        shown: '10001',
        requirement: 'must be an integer from 1 to 10000',
      },
      {
        name: 'non-boolean e-mail stub flag',
        raw: { stubProviders: { email: 'on' } },
        option: 'stubProviders.email',
        value: 'on',
        shown: '"on"',
        requirement: 'must be a boolean',
      },
      {
        name: 'non-boolean push stub flag',
        raw: { stubProviders: { push: 1 } },
        option: 'stubProviders.push',
        value: 1,
        shown: '1',
        requirement: 'must be a boolean',
      },
      ...[null, 5, [], 'on'].map((value) => ({
        name: `circuitBreaker ${JSON.stringify(value)}`,
        raw: { circuitBreaker: value },
        option: 'circuitBreaker',
        value,
        shown: JSON.stringify(value),
        requirement: 'must be an object',
      })),
      ...[null, 5, [], 'on'].map((value) => ({
        name: `metrics ${JSON.stringify(value)}`,
        raw: { metrics: value },
        option: 'metrics',
        value,
        shown: JSON.stringify(value),
        requirement: 'must be an object',
      })),
    ];

    it.each(cases)(
      '$name → InvalidModuleOptionsError naming the option and value',
      ({ raw, option, value, shown, requirement }) => {
        const error = optionsError(raw);
        expect(error).toBeInstanceOf(NotificationsRetryError);
        expect(error.code).toBe('invalid_module_options');
        expect(error.name).toBe('InvalidModuleOptionsError');
        expect(error.option).toBe(option);
        expect(error.value).toEqual(value);
        expect(error.message).toContain(`"${option}"`);
        expect(error.message).toContain(`got ${shown}`);
        if (typeof requirement === 'string') {
          expect(error.requirement).toBe(requirement);
          expect(error.message).toBe(
            `NotificationsRetryModule option "${option}" ${requirement}; got ${shown}`,
          );
        } else {
          expect(error.requirement).toMatch(requirement);
        }
      },
    );

    it('explains the TTL rule with the cycle deadline in the message', () => {
      const error = optionsError({ lockTtlMs: 40_000, maxCycleDurationMs: 40_000 });
      expect(error.message).toContain('maxCycleDurationMs');
      expect(error.message).toContain('40000');
    });

    it('rejects NaN batchSize', () => {
      expect(optionsError({ batchSize: NaN }).option).toBe('batchSize');
    });

    // JSON.stringify prints NaN and Infinity as "null", which misleads whoever reads the message.
    it('shows NaN as NaN in the message, not as null', () => {
      expect(optionsError({ batchSize: NaN }).message).toContain('got NaN');
    });
  });
});

describe('resolveOptions circuitBreaker', () => {
  it.each([
    [{ errorThresholdPercentage: 0 }, 'circuitBreaker.errorThresholdPercentage', '0'],
    [{ volumeThreshold: 1.5 }, 'circuitBreaker.volumeThreshold', '1.5'],
    [{ resetTimeoutMs: -1 }, 'circuitBreaker.resetTimeoutMs', '-1'],
    [{ enabled: 'yes' }, 'circuitBreaker.enabled', '"yes"'],
    [{ threshold: 5 }, 'circuitBreaker.threshold', '5'],
  ])('refuses %j, naming the option and the value', (circuitBreaker, option, shown) => {
    expect(() => resolveOptions({ circuitBreaker } as never)).toThrow(InvalidModuleOptionsError);
    expect(() => resolveOptions({ circuitBreaker } as never)).toThrow(`"${option}"`);
    expect(() => resolveOptions({ circuitBreaker } as never)).toThrow(`got ${shown}`);
  });

  it('bounds the rolling window to 10 ms .. a day', () => {
    const error = optionsError({ circuitBreaker: { rollingWindowMs: 24 * 3_600_000 + 1 } });
    expect(error.message).toBe(
      'NotificationsRetryModule option "circuitBreaker.rollingWindowMs" must be an integer from 10 to 86400000; got 86400001',
    );
    expect(optionsError({ circuitBreaker: { rollingWindowMs: 9 } }).option).toBe(
      'circuitBreaker.rollingWindowMs',
    );
  });

  it('names the unknown key with the requirement', () => {
    expect(optionsError({ circuitBreaker: { threshold: 5 } }).message).toBe(
      'NotificationsRetryModule option "circuitBreaker.threshold" is not a known option (a typo?); got 5',
    );
  });

  it('is on by default with the documented thresholds', () => {
    expect(resolveOptions({}).circuitBreaker).toEqual({
      enabled: true,
      errorThresholdPercentage: 50,
      volumeThreshold: 10,
      resetTimeoutMs: 60_000,
      rollingWindowMs: 120_000,
    });
  });
});

describe('resolveOptions metrics.registry', () => {
  const methods = {
    registerMetric: () => undefined,
    getSingleMetric: () => undefined,
    metrics: () => '',
  };

  it('accepts any object with the methods of a Registry (another copy of prom-client)', () => {
    const registry = { ...methods };
    expect(resolveOptions({ metrics: { registry } } as never).metrics.registry).toBe(registry);
  });

  it.each([
    ['a string', 'prom'],
    ['a function with the methods', Object.assign(() => undefined, methods)],
    ['an object without registerMetric', { ...methods, registerMetric: undefined }],
    ['an object without getSingleMetric', { ...methods, getSingleMetric: 1 }],
    ['an object without metrics', { ...methods, metrics: 'text' }],
  ])('refuses %s, saying what it must be', (_label, registry) => {
    const error = optionsError({ metrics: { registry } });
    expect(error.option).toBe('metrics.registry');
    expect(error.requirement).toBe(
      "must be a prom-client Registry (new Registry() from 'prom-client')",
    );
  });
});
