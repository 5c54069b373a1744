import { InvalidOutboxPublisherOptionsError } from '../../errors/invalid-outbox-publisher-options.error';
import { NatsJetStreamOutboxPublisher } from './nats-jetstream-outbox-publisher';
import type { NatsJetStreamPublisherOptions } from './nats-jetstream-publisher-options';
import { natsDuration } from './jetstream-duplicate-window';
import { resolveNatsPublisherOptions } from './resolve-nats-publisher-options';

describe('NatsJetStreamOutboxPublisher options', () => {
  it('takes one URL, a comma-separated list or an array, and builds subjects from the prefix', () => {
    expect(
      resolveNatsPublisherOptions({ servers: 'nats://a:4222, nats://b:4222' }).servers,
    ).toEqual(['nats://a:4222', 'nats://b:4222']);
    const publisher = new NatsJetStreamOutboxPublisher({
      servers: ['tls://n:4443'],
      subjectPrefix: 'eu.pin',
    });
    expect(publisher.subjectFor('pin.notifications.dispatched.v1')).toBe(
      'eu.pin.pin.notifications.dispatched.v1',
    );
    expect(new NatsJetStreamOutboxPublisher({ servers: 'nats://n' }).subjectFor('a.b')).toBe('a.b');
  });

  it.each([
    [
      { servers: 'http://n:4222' },
      'servers',
      'must hold nats:// or tls:// URLs (not http://); got "http://n:4222/"',
    ],
    [
      { servers: 'not a url' },
      'servers',
      'must hold nats:// or tls:// URLs; got a value that is not a URL (not shown, it may contain a password)',
    ],
    [{ servers: ['nats://a', 42] }, 'servers', 'must hold nats:// or tls:// URLs; got 42'],
    [
      { servers: 'nats://' },
      'servers',
      'must hold URLs of the form nats://[user:password@]host[:port]; got "nats://"',
    ],
    [{ servers: 'nats://user:secret@n:99999' }, 'servers', 'not shown, it may contain a password'],
    [
      { servers: 'nats://user:secret@n:4222/path' },
      'servers',
      'must hold URLs of the form nats://[user:password@]host[:port]; got "nats://user:***@n:4222/path"',
    ],
    [{ servers: [] }, 'servers', 'must be a nats:// URL or a non-empty list of them'],
    [{ servers: 'nats://n', subjectPrefix: 'pin.*' }, 'subjectPrefix', 'no wildcards'],
    [{ servers: 'nats://n', subjectPrefix: 'pin..eu' }, 'subjectPrefix', 'got "pin..eu"'],
    [{ servers: 'nats://n', subjectPrefix: 'pin ' }, 'subjectPrefix', 'got "pin "'],
    [{ servers: 'nats://n', subjectPrefix: 'eu pin' }, 'subjectPrefix', 'got "eu pin"'],
    [{ servers: 'nats://n', stream: 'a.b' }, 'stream', 'must be a JetStream stream name'],
    [
      { servers: 'nats://n', ackTimeoutMs: 0 },
      'ackTimeoutMs',
      'must be an integer from 1 to 600000; got 0',
    ],
    [
      { servers: 'nats://n', connectTimeoutMs: 600_001 },
      'connectTimeoutMs',
      'must be an integer from 1 to 600000; got 600001',
    ],
    [{ servers: 'nats://n', subject: 'x' }, 'subject', 'is not a known option (a typo?)'],
    [
      { servers: 'nats://n', createStream: true },
      'createStream',
      'needs the stream option: the name of the stream to create; got true',
    ],
    [
      { servers: 'nats://n', stream: 'S', createStream: true, verifyAtStart: false },
      'createStream',
      'needs verifyAtStart: the stream is created by the check at start; got true',
    ],
    [{ servers: 'nats://n', verifyAtStart: 'no' }, 'verifyAtStart', 'must be a boolean; got "no"'],
    [{ servers: 'nats://n', name: '' }, 'name', 'must be a non-empty string; got ""'],
    [{ servers: 'nats://n', name: '   ' }, 'name', 'must be a non-empty string; got "   "'],
    [{ servers: 'nats://n', name: 42 }, 'name', 'must be a non-empty string; got 42'],
    [{ servers: 'nats://n', createStream: 'yes' }, 'createStream', 'must be a boolean; got "yes"'],
  ])('refuses %j naming the option, never a password', (options, option, message) => {
    let thrown: unknown;
    try {
      // Values a plain-JavaScript host could pass: the constructor checks them at run time.
      new NatsJetStreamOutboxPublisher(options as NatsJetStreamPublisherOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidOutboxPublisherOptionsError);
    expect((thrown as InvalidOutboxPublisherOptionsError).option).toBe(option);
    expect((thrown as Error).message).toContain(`NatsJetStreamOutboxPublisher option "${option}"`);
    expect((thrown as Error).message).toContain(message);
    expect((thrown as Error).message).not.toContain('secret');
  });

  it.each([
    ['null', null, 'null'],
    ['an array', ['nats://n'], '["nats://n"]'],
    ['a bare URL', 'nats://n', '"nats://n"'],
  ])('refuses options that are %s, not an object', (_label, raw, shown) => {
    expect(() => resolveNatsPublisherOptions(raw)).toThrow(
      new InvalidOutboxPublisherOptionsError(
        'NatsJetStreamOutboxPublisher',
        'options',
        shown,
        'must be an object with at least servers',
      ),
    );
  });

  it('takes every option given, and defaults those not given', () => {
    expect(resolveNatsPublisherOptions({ servers: 'nats://n' })).toMatchObject({
      servers: ['nats://n'],
      subjectPrefix: null,
      stream: null,
      name: 'pin-notifications-outbox',
      connectTimeoutMs: 5_000,
      ackTimeoutMs: 5_000,
      verifyAtStart: true,
      createStream: false,
      relayEnabled: true,
    });
    expect(
      resolveNatsPublisherOptions({
        servers: ['nats://a:4222'],
        subjectPrefix: 'eu.pin',
        stream: 'PIN_OUTBOX-1',
        name: 'billing-outbox',
        connectTimeoutMs: 2_000,
        ackTimeoutMs: 3_000,
        verifyAtStart: true,
        createStream: true,
        outboxRelay: { enabled: true },
      }),
    ).toMatchObject({
      servers: ['nats://a:4222'],
      subjectPrefix: 'eu.pin',
      stream: 'PIN_OUTBOX-1',
      name: 'billing-outbox',
      connectTimeoutMs: 2_000,
      ackTimeoutMs: 3_000,
      verifyAtStart: true,
      createStream: true,
      relayEnabled: true,
    });
  });

  it('takes a server URL with or without the trailing slash, and the limits of the timeouts', () => {
    expect(
      resolveNatsPublisherOptions({
        servers: ['nats://a:4222', 'nats://b:4222/'],
        connectTimeoutMs: 1,
        ackTimeoutMs: 600_000,
      }),
    ).toMatchObject({
      servers: ['nats://a:4222', 'nats://b:4222/'],
      connectTimeoutMs: 1,
      ackTimeoutMs: 600_000,
    });
  });

  it('lets the check at start be turned off when no stream is to be created', () => {
    expect(
      resolveNatsPublisherOptions({ servers: 'nats://n', verifyAtStart: false }),
    ).toMatchObject({ verifyAtStart: false, createStream: false });
  });

  it('knows the relay is off only when its options say enabled: false', () => {
    const relayEnabled = (outboxRelay: unknown): boolean =>
      resolveNatsPublisherOptions({ servers: 'nats://n', outboxRelay }).relayEnabled;
    expect(relayEnabled(undefined)).toBe(true);
    expect(relayEnabled({})).toBe(true);
    expect(relayEnabled({ enabled: true })).toBe(true);
    expect(relayEnabled({ enabled: false })).toBe(false);
  });

  it('derives the duplicate window a stream must keep from the relay options it is given', () => {
    // The relay's defaults: 30 000 + 60 000 × 1.2 + 5 000, under JetStream's own 2 min default.
    expect(resolveNatsPublisherOptions({ servers: 'nats://n' }).requiredDuplicateWindowMs).toBe(
      107_000,
    );
    expect(
      resolveNatsPublisherOptions({
        servers: 'nats://n',
        outboxRelay: { claimTtlMs: 200_000, backoffMaxMs: 100_000, pollIntervalMs: 1_000 },
      }).requiredDuplicateWindowMs,
    ).toBe(321_000);
    expect(() =>
      resolveNatsPublisherOptions({ servers: 'nats://n', outboxRelay: { claimTtlMs: 'long' } }),
    ).toThrow(/outboxRelay\.claimTtlMs/);
  });

  it('writes durations as the nats CLI takes them', () => {
    expect([120_000, 107_000, 177_000, 3_723_000, 500].map(natsDuration)).toEqual([
      '2m',
      '1m47s',
      '2m57s',
      '1h2m3s',
      '1s',
    ]);
  });
});
