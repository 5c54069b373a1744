import { Logger } from '@nestjs/common';
import { InvalidChannelCatalogError } from '../errors/invalid-channel-catalog.error';
import { InvalidChannelConfigError } from '../errors/invalid-channel-config.error';
import { ChannelCatalog, readCatalogChannels } from './channel-catalog';
import type { ChannelConfig } from './channel-config';
import { validateCatalogChannels, validateChannelConfig } from './validate-channel-config';

const SOURCE = 'ChannelCatalog TeamCatalog channel';

function sms(overrides: Record<string, unknown> = {}): ChannelConfig {
  const config: ChannelConfig = {
    key: 'sms',
    isEnabled: true,
    providerKey: 'twilio',
    maxAttempts: 3,
    backoff: { kind: 'Exponential', baseMs: 1_000, maxMs: 60_000, multiplier: 2 },
    timeoutMs: 5_000,
    rateLimitPerSec: null,
    maxConcurrency: null,
  };
  return { ...config, ...overrides };
}

function invalid(entry: unknown): InvalidChannelConfigError {
  let thrown: unknown;
  try {
    validateChannelConfig(entry, SOURCE);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidChannelConfigError);
  return thrown as InvalidChannelConfigError;
}

describe('validateChannelConfig (what a custom ChannelCatalog returns)', () => {
  it('accepts a valid config, keeping jitter as given and trimming the provider key', () => {
    expect(validateChannelConfig(sms({ providerKey: ' twilio ' }), SOURCE)).toEqual({
      ...sms(),
      // sms() gives no jitter: on, the one default.
      backoff: { kind: 'Exponential', baseMs: 1_000, maxMs: 60_000, multiplier: 2, jitter: true },
    });
    expect(
      validateChannelConfig(sms({ backoff: { kind: 'Fixed', baseMs: 500, jitter: true } }), SOURCE)
        .backoff,
    ).toEqual({ kind: 'Fixed', baseMs: 500, maxMs: null, jitter: true });
  });

  it('turns jitter on when the entry does not say, like a table row (one default)', () => {
    expect(
      validateChannelConfig(sms({ backoff: { kind: 'Fixed', baseMs: 500 } }), SOURCE).backoff,
    ).toEqual({ kind: 'Fixed', baseMs: 500, maxMs: null, jitter: true });
  });

  it('reads absent optional limits as none, like null columns', () => {
    const rest: Record<string, unknown> = { ...sms() };
    delete rest.rateLimitPerSec;
    delete rest.maxConcurrency;
    expect(validateChannelConfig(rest, SOURCE)).toMatchObject({
      rateLimitPerSec: null,
      maxConcurrency: null,
    });
  });

  it.each<[string, unknown, string, string]>([
    ['maxAttempts 0', sms({ maxAttempts: 0 }), 'maxAttempts', 'got 0'],
    ['maxAttempts "3" (a string)', sms({ maxAttempts: '3' }), 'maxAttempts', 'got "3"'],
    ['timeoutMs NaN', sms({ timeoutMs: NaN }), 'timeoutMs', 'got NaN'],
    ['timeoutMs missing', sms({ timeoutMs: undefined }), 'timeoutMs', 'got undefined'],
    [
      'negative base delay',
      sms({ backoff: { kind: 'Fixed', baseMs: -1 } }),
      'backoff.baseMs',
      'got -1',
    ],
    [
      'unknown backoff kind',
      sms({ backoff: { kind: 'Linear', baseMs: 1 } }),
      'backoff.kind',
      'got "Linear"',
    ],
    [
      'Exponential without a cap',
      sms({ backoff: { kind: 'Exponential', baseMs: 1, multiplier: 2 } }),
      'backoff.maxMs',
      'got null',
    ],
    [
      'multiplier below 1',
      sms({ backoff: { kind: 'Exponential', baseMs: 1, maxMs: 10, multiplier: 0.5 } }),
      'backoff.multiplier',
      'got 0.5',
    ],
    ['backoff missing', sms({ backoff: undefined }), 'backoff', 'got undefined'],
    [
      'jitter "yes"',
      sms({ backoff: { kind: 'Fixed', baseMs: 1, jitter: 'yes' } }),
      'backoff.jitter',
      'got "yes"',
    ],
    ['rate limit 0', sms({ rateLimitPerSec: 0 }), 'rateLimitPerSec', 'got 0'],
    ['max concurrency 1.5', sms({ maxConcurrency: 1.5 }), 'maxConcurrency', 'got 1.5'],
    ['blank provider key', sms({ providerKey: '  ' }), 'providerKey', 'got "  "'],
    ['numeric provider key', sms({ providerKey: 7 }), 'providerKey', 'got 7'],
    ['isEnabled "true" (a string)', sms({ isEnabled: 'true' }), 'isEnabled', 'got "true"'],
    ['empty key', sms({ key: '' }), 'key', 'got ""'],
    ['numeric key', sms({ key: 42 }), 'key', 'got 42'],
  ])('%s → InvalidChannelConfigError naming the field and value', (_name, entry, field, shown) => {
    const error = invalid(entry);
    expect(error.code).toBe('invalid_channel_config');
    expect(error.column).toBe(field);
    expect(error.source).toBe(SOURCE);
    expect(error.message).toContain(SOURCE);
    expect(error.message).toContain(`: ${field} `);
    expect(error.message).toContain(shown);
  });

  it.each<[string, unknown, string]>([
    [
      'an entry that is a string',
      'sms',
      '"undefined": (entry) must be a ChannelConfig object; got "sms"',
    ],
    ['a blank key', sms({ key: '  ' }), '"  ": key must be a non-empty string; got "  "'],
    [
      'isEnabled "true" (a string)',
      sms({ isEnabled: 'true' }),
      '"sms": isEnabled must be a boolean; got "true"',
    ],
    [
      'a numeric provider key',
      sms({ providerKey: 7 }),
      '"sms": providerKey must be a non-empty string; got 7',
    ],
    [
      'a null backoff',
      sms({ backoff: null }),
      '"sms": backoff must be a RetryBackoff object; got null',
    ],
    [
      'a backoff array',
      sms({ backoff: [] }),
      '"sms": backoff must be a RetryBackoff object; got []',
    ],
    [
      'jitter "yes"',
      sms({ backoff: { kind: 'Fixed', baseMs: 1, jitter: 'yes' } }),
      '"sms": backoff.jitter must be a boolean when given; got "yes"',
    ],
  ])('states the requirement for %s', (_name, entry, message) => {
    expect(invalid(entry).message).toBe(`${SOURCE} ${message}`);
  });

  it('rejects an entry that is not an object', () => {
    expect(invalid(null).column).toBe('(entry)');
    expect(invalid('sms').column).toBe('(entry)');
    expect(invalid([sms()]).column).toBe('(entry)');
  });
});

describe('validateCatalogChannels', () => {
  it('leaves invalid entries out, reports each, and keeps the rest in order', () => {
    const reported: InvalidChannelConfigError[] = [];
    const result = validateCatalogChannels(
      [sms({ key: 'a' }), sms({ key: 'b', maxAttempts: 0 }), null, sms({ key: 'c' })],
      'TeamCatalog',
      (error) => reported.push(error),
    );
    expect(result.map((c) => c.key)).toEqual(['a', 'c']);
    expect(reported.map((e) => [e.channel, e.column])).toEqual([
      ['b', 'maxAttempts'],
      ['undefined', '(entry)'],
    ]);
    // Named as a custom catalog's entry, not as a table row.
    expect(reported.map((e) => e.source)).toEqual([SOURCE, SOURCE]);
    expect(reported[0].message).toMatch(/^ChannelCatalog TeamCatalog channel "b": maxAttempts /);
  });

  it('is idempotent on its own output', () => {
    const once = validateCatalogChannels([sms()], 'TeamCatalog', () => undefined);
    expect(validateCatalogChannels(once, 'TeamCatalog', () => undefined)).toEqual(once);
  });

  it.each([null, undefined, { sms: sms() }, 'sms'])(
    'throws InvalidChannelCatalogError for a result that is not an array (%p)',
    (result) => {
      expect(() => validateCatalogChannels(result, 'TeamCatalog', () => undefined)).toThrow(
        InvalidChannelCatalogError,
      );
      expect(() => validateCatalogChannels(result, 'TeamCatalog', () => undefined)).toThrow(
        /^ChannelCatalog TeamCatalog\.getChannels\(\) must resolve to an array/,
      );
    },
  );
});

describe('ChannelCatalog (the boundary every catalog passes)', () => {
  class TeamCatalog extends ChannelCatalog {
    constructor(public entries: unknown) {
      super();
    }
    getChannels(): Promise<readonly ChannelConfig[]> {
      return Promise.resolve(this.entries as ChannelConfig[]);
    }
  }

  it("readCatalogChannels validates a subclass's getChannels(), leaving the invalid entries out with a log line", async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const catalog = new TeamCatalog([sms(), sms({ key: 'push', timeoutMs: 0 })]);
      expect((await readCatalogChannels(catalog)).channels.map((c) => c.key)).toEqual(['sms']);
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({
          event: 'channel-config-invalid',
          catalog: 'TeamCatalog',
          channel: 'push',
          field: 'timeoutMs',
          errorCode: 'invalid_channel_config',
        }),
      );
    } finally {
      logged.mockRestore();
    }
  });

  it('rejects with InvalidChannelCatalogError when the subclass returns no array', async () => {
    await expect(readCatalogChannels(new TeamCatalog(undefined))).rejects.toBeInstanceOf(
      InvalidChannelCatalogError,
    );
  });

  it("passes the subclass's own rejection through unchanged", async () => {
    class Failing extends ChannelCatalog {
      getChannels(): Promise<readonly ChannelConfig[]> {
        return Promise.reject(new Error('config service down'));
      }
    }
    await expect(readCatalogChannels(new Failing())).rejects.toThrow('config service down');
  });

  it('readCatalogChannels validates a plain-object catalog too, logging each invalid entry once', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const plain = {
        getChannels: () => Promise.resolve([sms(), sms({ key: 'push', maxAttempts: 0 })]),
      } as ChannelCatalog;
      expect((await readCatalogChannels(plain)).channels.map((c) => c.key)).toEqual(['sms']);
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged).toHaveBeenLastCalledWith(
        expect.objectContaining({
          catalog: 'ChannelCatalog',
          channel: 'push',
          field: 'maxAttempts',
        }),
      );

      logged.mockClear();
      const wrapped = new TeamCatalog([sms(), sms({ key: 'push', maxAttempts: 0 })]);
      expect((await readCatalogChannels(wrapped)).channels.map((c) => c.key)).toEqual(['sms']);
      expect(logged).toHaveBeenCalledTimes(1);
    } finally {
      logged.mockRestore();
    }
  });

  it('logs an invalid entry once while it stays the same, again when it changes, and names it invalid every read', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const catalog = new TeamCatalog([sms(), sms({ key: 'push', maxAttempts: 0 })]);
      for (let cycle = 0; cycle < 3; cycle++) {
        expect((await readCatalogChannels(catalog)).invalid).toEqual(['push']);
      }
      expect(logged).toHaveBeenCalledTimes(1);

      catalog.entries = [sms(), sms({ key: 'push', timeoutMs: 0 })];
      await readCatalogChannels(catalog);
      expect(logged).toHaveBeenCalledTimes(2);
      expect(logged).toHaveBeenLastCalledWith(expect.objectContaining({ field: 'timeoutMs' }));
    } finally {
      logged.mockRestore();
    }
  });
});
