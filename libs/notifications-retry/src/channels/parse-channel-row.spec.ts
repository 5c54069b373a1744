import { InvalidChannelConfigError } from '../errors/invalid-channel-config.error';
import { NotificationsRetryError } from '../errors/notifications-retry.error';
import { parseChannelRow, type ChannelRow } from './parse-channel-row';

function exponentialRow(overrides: Partial<ChannelRow> = {}): ChannelRow {
  return {
    key: 'email',
    isEnabled: true,
    providerKey: 'sendgrid',
    maxAttempts: 5,
    backoffKind: 'Exponential',
    backoffBaseMs: 1_000,
    backoffMaxMs: 600_000,
    backoffMultiplier: 2.5,
    timeoutMs: 10_000,
    rateLimitPerSec: 50,
    maxConcurrency: 8,
    ...overrides,
  };
}

function fixedRow(overrides: Partial<ChannelRow> = {}): ChannelRow {
  return {
    key: 'sms',
    isEnabled: false,
    providerKey: 'twilio',
    maxAttempts: 3,
    backoffKind: 'Fixed',
    backoffBaseMs: 30_000,
    backoffMaxMs: null,
    backoffMultiplier: null,
    timeoutMs: 5_000,
    rateLimitPerSec: null,
    maxConcurrency: null,
    ...overrides,
  };
}

/** Calls parseChannelRow and returns what it threw; fails the test if it did not throw. */
function parseError(row: ChannelRow): InvalidChannelConfigError {
  let thrown: unknown;
  try {
    parseChannelRow(row);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidChannelConfigError);
  return thrown as InvalidChannelConfigError;
}

describe('parseChannelRow', () => {
  describe('valid rows', () => {
    it('maps an Exponential row', () => {
      expect(parseChannelRow(exponentialRow())).toEqual({
        key: 'email',
        isEnabled: true,
        providerKey: 'sendgrid',
        maxAttempts: 5,
        backoff: {
          kind: 'Exponential',
          baseMs: 1_000,
          maxMs: 600_000,
          multiplier: 2.5,
          jitter: true,
        },
        timeoutMs: 10_000,
        rateLimitPerSec: 50,
        maxConcurrency: 8,
      });
    });

    it('maps a Fixed row and ignores the multiplier', () => {
      const config = parseChannelRow(fixedRow({ backoffMultiplier: 0 }));
      expect(config).toEqual({
        key: 'sms',
        isEnabled: false,
        providerKey: 'twilio',
        maxAttempts: 3,
        backoff: { kind: 'Fixed', baseMs: 30_000, maxMs: null, jitter: true },
        timeoutMs: 5_000,
        rateLimitPerSec: null,
        maxConcurrency: null,
      });
    });

    it('accepts the boundary values', () => {
      const config = parseChannelRow(
        exponentialRow({
          maxAttempts: 1,
          backoffBaseMs: 0,
          backoffMaxMs: 0,
          backoffMultiplier: 1,
          timeoutMs: 1,
          rateLimitPerSec: 0.5,
          maxConcurrency: 1,
        }),
      );
      expect(config.maxAttempts).toBe(1);
      expect(config.backoff).toEqual({
        kind: 'Exponential',
        baseMs: 0,
        maxMs: 0,
        multiplier: 1,
        jitter: true,
      });
      expect(config.timeoutMs).toBe(1);
      expect(config.rateLimitPerSec).toBe(0.5);
      expect(config.maxConcurrency).toBe(1);
    });

    it('accepts max equal to base', () => {
      expect(
        parseChannelRow(exponentialRow({ backoffBaseMs: 5_000, backoffMaxMs: 5_000 })).backoff,
      ).toEqual({
        kind: 'Exponential',
        baseMs: 5_000,
        maxMs: 5_000,
        multiplier: 2.5,
        jitter: true,
      });
    });

    it('keeps jitter on unless the row turns it off', () => {
      expect(parseChannelRow(exponentialRow({ backoffJitter: null })).backoff.jitter).toBe(true);
      expect(parseChannelRow(exponentialRow({ backoffJitter: false })).backoff.jitter).toBe(false);
      expect(parseChannelRow(fixedRow({ backoffJitter: false })).backoff.jitter).toBe(false);
    });

    it('takes backoff_max_ms of a Fixed row as a cap (equal to the base allowed), refusing one below the base', () => {
      expect(parseChannelRow(fixedRow({ backoffMaxMs: 40_000 })).backoff).toMatchObject({
        maxMs: 40_000,
      });
      expect(parseChannelRow(fixedRow({ backoffMaxMs: 30_000 })).backoff).toMatchObject({
        maxMs: 30_000,
      });
      expect(() => parseChannelRow(fixedRow({ backoffMaxMs: 1 }))).toThrow(
        /backoff_max_ms must be null or an integer ≥ backoff_base_ms \(30000\); got 1/,
      );
    });

    it('trims the provider key', () => {
      expect(parseChannelRow(exponentialRow({ providerKey: '  sendgrid \n' })).providerKey).toBe(
        'sendgrid',
      );
    });
  });

  describe('invalid rows', () => {
    const cases: ReadonlyArray<{
      name: string;
      row: ChannelRow;
      column: string;
      value: unknown;
      shown: string;
    }> = [
      {
        name: 'max_attempts 0',
        row: exponentialRow({ maxAttempts: 0 }),
        column: 'max_attempts',
        value: 0,
        shown: '0',
      },
      {
        name: 'max_attempts −3',
        row: exponentialRow({ maxAttempts: -3 }),
        column: 'max_attempts',
        value: -3,
        shown: '-3',
      },
      {
        name: 'max_attempts null',
        row: exponentialRow({ maxAttempts: null }),
        column: 'max_attempts',
        value: null,
        shown: 'null',
      },
      {
        name: 'max_attempts 2.5',
        row: exponentialRow({ maxAttempts: 2.5 }),
        column: 'max_attempts',
        value: 2.5,
        shown: '2.5',
      },
      {
        name: 'backoff_kind "Linear"',
        row: exponentialRow({ backoffKind: 'Linear' }),
        column: 'backoff_kind',
        value: 'Linear',
        shown: '"Linear"',
      },
      {
        name: 'backoff_kind "exponential" (wrong case)',
        row: exponentialRow({ backoffKind: 'exponential' }),
        column: 'backoff_kind',
        value: 'exponential',
        shown: '"exponential"',
      },
      {
        name: 'backoff_kind null',
        row: exponentialRow({ backoffKind: null }),
        column: 'backoff_kind',
        value: null,
        shown: 'null',
      },
      {
        name: 'backoff_base_ms −1 (Exponential)',
        row: exponentialRow({ backoffBaseMs: -1 }),
        column: 'backoff_base_ms',
        value: -1,
        shown: '-1',
      },
      {
        name: 'backoff_base_ms −500 (Fixed)',
        row: fixedRow({ backoffBaseMs: -500 }),
        column: 'backoff_base_ms',
        value: -500,
        shown: '-500',
      },
      {
        name: 'backoff_base_ms null',
        row: fixedRow({ backoffBaseMs: null }),
        column: 'backoff_base_ms',
        value: null,
        shown: 'null',
      },
      {
        name: 'backoff_max_ms below base',
        row: exponentialRow({ backoffBaseMs: 1_000, backoffMaxMs: 999 }),
        column: 'backoff_max_ms',
        value: 999,
        shown: '999',
      },
      {
        name: 'backoff_max_ms null on Exponential',
        row: exponentialRow({ backoffMaxMs: null }),
        column: 'backoff_max_ms',
        value: null,
        shown: 'null',
      },
      {
        name: 'backoff_multiplier 0.5',
        row: exponentialRow({ backoffMultiplier: 0.5 }),
        column: 'backoff_multiplier',
        value: 0.5,
        shown: '0.5',
      },
      {
        name: 'backoff_multiplier 0',
        row: exponentialRow({ backoffMultiplier: 0 }),
        column: 'backoff_multiplier',
        value: 0,
        shown: '0',
      },
      {
        name: 'backoff_multiplier null on Exponential',
        row: exponentialRow({ backoffMultiplier: null }),
        column: 'backoff_multiplier',
        value: null,
        shown: 'null',
      },
      {
        name: 'timeout_ms 0',
        row: exponentialRow({ timeoutMs: 0 }),
        column: 'timeout_ms',
        value: 0,
        shown: '0',
      },
      {
        name: 'timeout_ms −10',
        row: fixedRow({ timeoutMs: -10 }),
        column: 'timeout_ms',
        value: -10,
        shown: '-10',
      },
      {
        name: 'timeout_ms null',
        row: exponentialRow({ timeoutMs: null }),
        column: 'timeout_ms',
        value: null,
        shown: 'null',
      },
      {
        name: 'timeout_ms 1.5',
        row: exponentialRow({ timeoutMs: 1.5 }),
        column: 'timeout_ms',
        value: 1.5,
        shown: '1.5',
      },
      {
        name: 'rate_limit_per_sec 0',
        row: exponentialRow({ rateLimitPerSec: 0 }),
        column: 'rate_limit_per_sec',
        value: 0,
        shown: '0',
      },
      {
        name: 'rate_limit_per_sec −1',
        row: exponentialRow({ rateLimitPerSec: -1 }),
        column: 'rate_limit_per_sec',
        value: -1,
        shown: '-1',
      },
      {
        name: 'max_concurrency 0',
        row: exponentialRow({ maxConcurrency: 0 }),
        column: 'max_concurrency',
        value: 0,
        shown: '0',
      },
      {
        name: 'max_concurrency −2',
        row: exponentialRow({ maxConcurrency: -2 }),
        column: 'max_concurrency',
        value: -2,
        shown: '-2',
      },
      {
        name: 'max_concurrency 1.5',
        row: exponentialRow({ maxConcurrency: 1.5 }),
        column: 'max_concurrency',
        value: 1.5,
        shown: '1.5',
      },
      {
        name: 'provider_key null',
        row: exponentialRow({ providerKey: null }),
        column: 'provider_key',
        value: null,
        shown: 'null',
      },
      {
        name: 'provider_key blank',
        row: exponentialRow({ providerKey: '   ' }),
        column: 'provider_key',
        value: '   ',
        shown: '"   "',
      },
    ];

    /** What each column must be, as the message states it (Exponential rows, base 1000). */
    const requirements: Readonly<Record<string, string>> = {
      provider_key: 'must be a non-empty string',
      max_attempts: 'must be an integer ≥ 1',
      backoff_kind: 'must be "Fixed" or "Exponential"',
      backoff_base_ms: 'must be an integer ≥ 0',
      backoff_max_ms: 'must be an integer ≥ backoff_base_ms (1000)',
      backoff_multiplier: 'must be a finite number ≥ 1',
      timeout_ms: 'must be an integer ≥ 1',
      rate_limit_per_sec: 'must be null or a number > 0',
      max_concurrency: 'must be null or an integer ≥ 1',
    };

    it.each(cases)(
      '$name → InvalidChannelConfigError naming the column, value and channel',
      ({ row, column, value, shown }) => {
        const error = parseError(row);
        expect(error).toBeInstanceOf(NotificationsRetryError);
        expect(error.code).toBe('invalid_channel_config');
        expect(error.name).toBe('InvalidChannelConfigError');
        expect(error.channel).toBe(row.key);
        expect(error.column).toBe(column);
        expect(error.value).toEqual(value);
        expect(error.message).toContain(`"${row.key}"`);
        expect(error.message).toContain(column);
        expect(error.message).toContain(`got ${shown}`);
        expect(error.requirement).toBe(requirements[column]);
        expect(error.message).toContain(`${column} ${requirements[column]}; got ${shown}`);
      },
    );

    it('reports the row key of the row being parsed, not a fixed one', () => {
      expect(parseError(exponentialRow({ key: 'push', maxConcurrency: 0 })).channel).toBe('push');
      expect(parseError(fixedRow({ key: 'in_app', timeoutMs: 0 })).channel).toBe('in_app');
    });

    it('rejects NaN in the columns that must be numbers', () => {
      // double precision columns can hold 'NaN' in PostgreSQL.
      expect(parseError(exponentialRow({ backoffMultiplier: NaN })).column).toBe(
        'backoff_multiplier',
      );
      expect(parseError(exponentialRow({ rateLimitPerSec: NaN })).column).toBe(
        'rate_limit_per_sec',
      );
      expect(parseError(exponentialRow({ maxAttempts: NaN })).column).toBe('max_attempts');
      expect(parseError(exponentialRow({ timeoutMs: NaN })).column).toBe('timeout_ms');
    });

    it('rejects numbers the driver hands back as text', () => {
      // A numeric or bigint column comes back from pg as a string; it is not a number.
      const asText = (text: string): number => text as unknown as number;
      const rateLimit = parseError(exponentialRow({ rateLimitPerSec: asText('5') }));
      expect(rateLimit.column).toBe('rate_limit_per_sec');
      expect(rateLimit.message).toContain('got "5"');
      expect(parseError(exponentialRow({ maxAttempts: asText('5') })).column).toBe('max_attempts');
    });

    it('rejects Infinity in the multiplier and the rate limit', () => {
      expect(parseError(exponentialRow({ backoffMultiplier: Infinity })).column).toBe(
        'backoff_multiplier',
      );
      expect(parseError(exponentialRow({ rateLimitPerSec: Infinity })).column).toBe(
        'rate_limit_per_sec',
      );
    });

    // double precision columns can hold NaN and ±Infinity; the message must not say "got null".
    it('shows NaN as NaN in the message, not as null', () => {
      expect(parseError(exponentialRow({ backoffMultiplier: NaN })).message).toContain('got NaN');
    });

    it('shows Infinity as Infinity in the message, not as null', () => {
      expect(parseError(exponentialRow({ rateLimitPerSec: Infinity })).message).toContain(
        'got Infinity',
      );
    });
  });
});
