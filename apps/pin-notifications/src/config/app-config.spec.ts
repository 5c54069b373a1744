import { DEFAULT_RETRY_CONCURRENCY, parseAppConfig } from './app-config';
import { InvalidEnvironmentVariableError } from './invalid-environment-variable.error';

describe('parseAppConfig', () => {
  it('defaults everything when the environment is empty', () => {
    expect(parseAppConfig({})).toEqual({
      port: 3000,
      databaseUrl: null,
      retryWorker: {
        enabled: true,
        cron: undefined,
        batchSize: undefined,
        concurrency: DEFAULT_RETRY_CONCURRENCY,
        stubProviders: { email: false, sms: false, push: false },
      },
      seedDemoData: null,
      logLevel: 'info',
      adminToken: null,
      outboxRelay: { nats: null, retentionDays: 7 },
    });
  });

  it('reads every variable', () => {
    const config = parseAppConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://pin:secret@db.internal:5432/pin',
      RETRY_WORKER_ENABLED: 'false',
      RETRY_CRON: '*/30 * * * * *',
      RETRY_BATCH_SIZE: '50',
      RETRY_CONCURRENCY: '8',
      STUB_PROVIDERS: ' email , push ',
      SEED_DEMO_DATA: 'TRUE',
      LOG_LEVEL: 'debug',
      ADMIN_TOKEN: 'an-admin-token-of-enough-length',
      NATS_URL: 'nats://relay:secret@nats-1:4222, nats://nats-2:4222',
      NATS_SUBJECT_PREFIX: 'eu.pin',
      NATS_STREAM: 'PIN_NOTIFICATIONS',
      NATS_CREATE_STREAM: 'true',
      OUTBOX_RETENTION_DAYS: '30',
    });
    expect(config).toEqual({
      port: 8080,
      databaseUrl: 'postgresql://pin:secret@db.internal:5432/pin',
      retryWorker: {
        enabled: false,
        cron: '*/30 * * * * *',
        batchSize: 50,
        concurrency: 8,
        stubProviders: { email: true, sms: false, push: true },
      },
      seedDemoData: true,
      logLevel: 'debug',
      adminToken: 'an-admin-token-of-enough-length',
      outboxRelay: {
        nats: {
          servers: ['nats://relay:secret@nats-1:4222', 'nats://nats-2:4222'],
          subjectPrefix: 'eu.pin',
          stream: 'PIN_NOTIFICATIONS',
          createStream: true,
        },
        retentionDays: 30,
      },
    });
  });

  it('refuses an ADMIN_TOKEN under 24 characters without showing it', () => {
    const parse = () => parseAppConfig({ ADMIN_TOKEN: 'short-secret' });
    expect(parse).toThrow(InvalidEnvironmentVariableError);
    expect(parse).toThrow(
      /ADMIN_TOKEN must be at least 24 characters.*got a value of 12 characters \(not shown\)/,
    );
    expect(parse).not.toThrow(/short-secret/);
  });

  it.each([
    [{ NATS_URL: 'http://nats:4222' }, 'NATS_URL', 'got "http://nats:4222/"'],
    [{ NATS_URL: 'nats://u:secret@nats:4222/x' }, 'NATS_URL', 'got "nats://u:***@nats:4222/x"'],
    [
      { NATS_URL: 'nats://u:secret@nats:999999' },
      'NATS_URL',
      'not shown, it may contain a password',
    ],
    [
      { NATS_URL: 'nats://nats:4222', NATS_SUBJECT_PREFIX: 'pin.>' },
      'NATS_SUBJECT_PREFIX',
      'got "pin.>"',
    ],
    [{ NATS_URL: 'nats://nats:4222', NATS_STREAM: 'a.b' }, 'NATS_STREAM', 'got "a.b"'],
    [{ NATS_SUBJECT_PREFIX: 'pin' }, 'NATS_SUBJECT_PREFIX', 'is set but NATS_URL is not'],
    [{ NATS_CREATE_STREAM: 'true' }, 'NATS_CREATE_STREAM', 'is set but NATS_URL is not'],
    [
      { NATS_URL: 'nats://nats:4222', NATS_CREATE_STREAM: 'true' },
      'NATS_CREATE_STREAM',
      'needs NATS_STREAM: the name of the stream to create',
    ],
    [
      { NATS_URL: 'nats://nats:4222', NATS_STREAM: 'S', NATS_CREATE_STREAM: 'yes' },
      'NATS_CREATE_STREAM',
      'must be true or false (or 1 or 0); got "yes"',
    ],
    [
      { OUTBOX_RETENTION_DAYS: '0' },
      'OUTBOX_RETENTION_DAYS',
      'must be a number of days from 1 to 3650',
    ],
    [{ OUTBOX_RETENTION_DAYS: '7d' }, 'OUTBOX_RETENTION_DAYS', 'got "7d"'],
  ])(
    'refuses the outbox relay settings %j, naming the variable and never a password',
    (env, variable, message) => {
      let thrown: unknown;
      try {
        parseAppConfig(env);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidEnvironmentVariableError);
      expect((thrown as InvalidEnvironmentVariableError).variable).toBe(variable);
      expect((thrown as Error).message).toContain(message);
      expect((thrown as Error).message).not.toContain('secret');
    },
  );

  it('treats empty variables as unset', () => {
    const config = parseAppConfig({
      PORT: '',
      DATABASE_URL: '  ',
      SEED_DEMO_DATA: '',
      STUB_PROVIDERS: '',
    });
    expect(config.port).toBe(3000);
    expect(config.databaseUrl).toBeNull();
    expect(config.seedDemoData).toBeNull();
  });

  it.each([
    ['PORT', 'eighty', '"eighty"'],
    ['PORT', '70000', '"70000"'],
    ['RETRY_WORKER_ENABLED', 'yes please', '"yes please"'],
    ['RETRY_CRON', 'every minute', '"every minute"'],
    ['RETRY_BATCH_SIZE', '0', '"0"'],
    ['RETRY_BATCH_SIZE', '1e3', '"1e3"'],
    ['RETRY_CONCURRENCY', '-2', '"-2"'],
    ['RETRY_CONCURRENCY', '2.5', '"2.5"'],
    ['STUB_PROVIDERS', 'email,fax', '"email,fax"'],
    ['SEED_DEMO_DATA', 'maybe', '"maybe"'],
    ['LOG_LEVEL', 'loud', '"loud"'],
  ])('rejects %s=%s, naming the variable and the value', (variable, value, shown) => {
    const parse = (): unknown => parseAppConfig({ [variable]: value });
    expect(parse).toThrow(InvalidEnvironmentVariableError);
    expect(parse).toThrow(`Environment variable ${variable} `);
    expect(parse).toThrow(`got ${shown}`);
  });

  it('rejects a non-postgres DATABASE_URL without showing its password', () => {
    const parse = (): unknown =>
      parseAppConfig({ DATABASE_URL: 'mysql://root:hunter2@db:3306/pin' });
    expect(parse).toThrow(
      'Environment variable DATABASE_URL must be a postgres:// or postgresql:// URL',
    );
    expect(parse).toThrow('got a "mysql:" URL');
    expect(parse).not.toThrow(/hunter2/);
  });

  it('does not echo a DATABASE_URL that is not a URL at all', () => {
    const parse = (): unknown => parseAppConfig({ DATABASE_URL: 'pin:hunter2@db/pin' });
    expect(parse).toThrow(/DATABASE_URL must be a postgres/);
    expect(parse).not.toThrow(/hunter2/);
  });

  it('requires DATABASE_URL in production rather than start a throw-away database', () => {
    expect(() => parseAppConfig({ NODE_ENV: 'production' })).toThrow(
      /DATABASE_URL is required when NODE_ENV=production/,
    );
    expect(
      parseAppConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/pin' }).databaseUrl,
    ).toBe('postgres://db/pin');
  });
});
