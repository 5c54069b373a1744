import { hostname } from 'node:os';
import { validateCronExpression } from 'cron';
import { register } from 'prom-client';
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
    }> = [
      {
        name: 'unknown key (typo)',
        raw: { batchsize: 100 },
        option: 'batchsize',
        value: 100,
        shown: '100',
      },
      {
        name: 'unknown key set to undefined',
        raw: { lockTTL: undefined },
        option: 'lockTTL',
        value: undefined,
        shown: 'undefined',
      },
      {
        name: 'non-integer batchSize',
        raw: { batchSize: 12.5 },
        option: 'batchSize',
        value: 12.5,
        shown: '12.5',
      },
      {
        name: 'string batchSize',
        raw: { batchSize: '200' },
        option: 'batchSize',
        value: '200',
        shown: '"200"',
      },
      { name: 'batchSize 0', raw: { batchSize: 0 }, option: 'batchSize', value: 0, shown: '0' },
      {
        name: 'metrics.maxLabelValues 0',
        raw: { metrics: { maxLabelValues: 0 } },
        option: 'metrics.maxLabelValues',
        value: 0,
        shown: '0',
      },
      {
        name: 'unknown metrics key',
        raw: { metrics: { registery: {} } },
        option: 'metrics.registery',
        value: {},
        shown: '{}',
      },
      {
        name: 'negative settleMarginMs',
        raw: { settleMarginMs: -1 },
        option: 'settleMarginMs',
        value: -1,
        shown: '-1',
      },
      {
        name: 'non-integer settleMarginMs',
        raw: { settleMarginMs: 1.5 },
        option: 'settleMarginMs',
        value: 1.5,
        shown: '1.5',
      },
      {
        name: 'negative batchSize',
        raw: { batchSize: -5 },
        option: 'batchSize',
        value: -5,
        shown: '-5',
      },
      {
        name: 'concurrency 0',
        raw: { concurrency: 0 },
        option: 'concurrency',
        value: 0,
        shown: '0',
      },
      {
        name: 'non-integer concurrency',
        raw: { concurrency: 2.5 },
        option: 'concurrency',
        value: 2.5,
        shown: '2.5',
      },
      {
        name: 'bad cron string',
        raw: { cron: 'every minute' },
        option: 'cron',
        value: 'every minute',
        shown: '"every minute"',
      },
      {
        name: 'cron with an out-of-range field',
        raw: { cron: '61 * * * * *' },
        option: 'cron',
        value: '61 * * * * *',
        shown: '"61 * * * * *"',
      },
      { name: 'empty cron', raw: { cron: '' }, option: 'cron', value: '', shown: '""' },
      {
        name: 'lockTtlMs equal to maxCycleDurationMs',
        raw: { lockTtlMs: 45_000 },
        option: 'lockTtlMs',
        value: 45_000,
        shown: '45000',
      },
      {
        name: 'lockTtlMs below maxCycleDurationMs',
        raw: { lockTtlMs: 30_000, maxCycleDurationMs: 60_000 },
        option: 'lockTtlMs',
        value: 30_000,
        shown: '30000',
      },
      { name: 'lockTtlMs 0', raw: { lockTtlMs: 0 }, option: 'lockTtlMs', value: 0, shown: '0' },
      {
        name: 'maxCycleDurationMs 0',
        raw: { maxCycleDurationMs: 0 },
        option: 'maxCycleDurationMs',
        value: 0,
        shown: '0',
      },
      {
        name: 'blank lockKey',
        raw: { lockKey: '  ' },
        option: 'lockKey',
        value: '  ',
        shown: '"  "',
      },
      {
        name: 'cycleLogRetentionMs under a minute',
        raw: { cycleLogRetentionMs: 59_999 },
        option: 'cycleLogRetentionMs',
        value: 59_999,
        shown: '59999',
      },
      {
        name: 'fractional cycleLogRetentionMs',
        raw: { cycleLogRetentionMs: 86_400_000.5 },
        option: 'cycleLogRetentionMs',
        value: 86_400_000.5,
        shown: '86400000.5',
      },
      {
        name: 'non-string instanceId',
        raw: { instanceId: 42 },
        option: 'instanceId',
        value: 42,
        shown: '42',
      },
      {
        name: 'preparedStatements neither a boolean nor "auto"',
        raw: { preparedStatements: 'off' },
        option: 'preparedStatements',
        value: 'off',
        shown: '"off"',
      },
      {
        name: 'preparedStatements "AUTO" (case matters)',
        raw: { preparedStatements: 'AUTO' },
        option: 'preparedStatements',
        value: 'AUTO',
        shown: '"AUTO"',
      },
      {
        name: 'preparedStatements null',
        raw: { preparedStatements: null },
        option: 'preparedStatements',
        value: null,
        shown: 'null',
      },
      {
        name: 'non-boolean enabled',
        raw: { enabled: 'yes' },
        option: 'enabled',
        value: 'yes',
        shown: '"yes"',
      },
      {
        name: 'stubProviders not an object',
        raw: { stubProviders: true },
        option: 'stubProviders',
        value: true,
        shown: 'true',
      },
      {
        name: 'stubProviders null',
        raw: { stubProviders: null },
        option: 'stubProviders',
        value: null,
        shown: 'null',
      },
      {
        name: 'stubProviders an array',
        raw: { stubProviders: ['email'] },
        option: 'stubProviders',
        value: ['email'],
        shown: '["email"]',
      },
      {
        name: 'unknown stub',
        raw: { stubProviders: { fax: true } },
        option: 'stubProviders.fax',
        value: true,
        shown: 'true',
      },
      {
        name: 'non-boolean stub flag',
        raw: { stubProviders: { sms: 'on' } },
        option: 'stubProviders.sms',
        value: 'on',
        shown: '"on"',
      },
    ];

    it.each(cases)(
      '$name → InvalidModuleOptionsError naming the option and value',
      ({ raw, option, value, shown }) => {
        const error = optionsError(raw);
        expect(error).toBeInstanceOf(NotificationsRetryError);
        expect(error.code).toBe('invalid_module_options');
        expect(error.name).toBe('InvalidModuleOptionsError');
        expect(error.option).toBe(option);
        expect(error.value).toEqual(value);
        expect(error.message).toContain(`"${option}"`);
        expect(error.message).toContain(`got ${shown}`);
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
