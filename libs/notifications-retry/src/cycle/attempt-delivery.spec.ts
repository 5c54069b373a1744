import { createHash } from 'node:crypto';
import { DeliveryError } from '../providers/errors/delivery.error';
import { NonRetriableDeliveryError } from '../providers/errors/non-retriable-delivery.error';
import { RetriableDeliveryError } from '../providers/errors/retriable-delivery.error';
import { ThrottledDeliveryError } from '../providers/errors/throttled-delivery.error';
import {
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '../providers/provider-adapter';
import { attemptDelivery, MAX_PROVIDER_MESSAGE_ID_LENGTH } from './attempt-delivery';

const ADDRESS = 'alice.smith@example.org';
const SUBJECT = 'Your March statement';
const BODY = 'Hello Alice, your March statement of account 4411 is ready to download.';

const message: OutgoingNotification = {
  id: '6f1d2c3b-8a7e-4c0d-9b5a-1e2f3a4b5c6d',
  tenantId: null,
  channel: 'email',
  recipientAddress: ADDRESS,
  subject: SUBJECT,
  body: BODY,
  attempts: 1,
};

/** A fake adapter that runs the given function and records every call. */
class FakeAdapter extends ProviderAdapter {
  readonly calls: Array<{ message: OutgoingNotification; context: SendContext }> = [];

  constructor(private readonly impl: (context: SendContext) => unknown) {
    super();
  }

  override send(msg: OutgoingNotification, context: SendContext): Promise<SendResult> {
    this.calls.push({ message: msg, context });
    return this.impl(context) as Promise<SendResult>;
  }
}

/** An adapter whose send() rejects with `error`, which may be any value, not only an Error. */
const rejecting = (error: unknown): FakeAdapter =>
  new FakeAdapter(async () => {
    throw error;
  });

/** A DeliveryError a team defines itself rather than using the three built-in ones. */
class CustomPermanentError extends DeliveryError {
  readonly retriable = false;
  constructor() {
    super('template_revoked', 'template was revoked');
  }
}

function expectNoPersonalData(text: string): void {
  expect(text).not.toContain(ADDRESS);
  expect(text).not.toContain(SUBJECT);
  expect(text).not.toContain(BODY);
}

describe('attemptDelivery', () => {
  const TIMEOUT_MS = 1_000;

  describe('success', () => {
    it('returns sent with the provider message id', async () => {
      const adapter = new FakeAdapter(async () => ({ providerMessageId: 'sg-42' }));
      await expect(attemptDelivery(adapter, message, TIMEOUT_MS)).resolves.toEqual({
        kind: 'sent',
        providerMessageId: 'sg-42',
      });
      expect(adapter.calls).toHaveLength(1);
      expect(adapter.calls[0].message).toBe(message);
    });

    it('passes the notification id as the idempotency key', async () => {
      const adapter = new FakeAdapter(async () => ({ providerMessageId: 'sg-1' }));
      await attemptDelivery(adapter, message, TIMEOUT_MS);
      expect(adapter.calls[0].context.idempotencyKey).toBe(message.id);
    });

    it('passes a live, not yet aborted signal', async () => {
      let abortedDuringCall: boolean | undefined;
      const adapter = new FakeAdapter(async ({ signal }) => {
        abortedDuringCall = signal.aborted;
        return { providerMessageId: 'sg-1' };
      });
      await attemptDelivery(adapter, message, TIMEOUT_MS);
      expect(adapter.calls[0].context.signal).toBeInstanceOf(AbortSignal);
      expect(abortedDuringCall).toBe(false);
    });

    it('accepts an adapter that is not async (returns a plain object)', async () => {
      const adapter = new FakeAdapter(() => ({ providerMessageId: 'sync-1' }));
      await expect(attemptDelivery(adapter, message, TIMEOUT_MS)).resolves.toEqual({
        kind: 'sent',
        providerMessageId: 'sync-1',
      });
    });

    it('leaves no timer behind once the call settles', async () => {
      jest.useFakeTimers();
      try {
        const adapter = new FakeAdapter(async () => ({ providerMessageId: 'sg-1' }));
        const outcome = await attemptDelivery(adapter, message, 60_000);
        expect(outcome.kind).toBe('sent');
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('delivery errors thrown by the adapter', () => {
    it('RetriableDeliveryError → retriable with its code and message', async () => {
      const outcome = await attemptDelivery(
        rejecting(new RetriableDeliveryError('provider_5xx', 'HTTP 503 Service Unavailable')),
        message,
        TIMEOUT_MS,
      );
      expect(outcome).toEqual({
        kind: 'retriable',
        errorCode: 'provider_5xx',
        errorMessage: 'HTTP 503 Service Unavailable',
      });
    });

    it('NonRetriableDeliveryError → non-retriable with its code and message', async () => {
      const outcome = await attemptDelivery(
        rejecting(new NonRetriableDeliveryError('invalid_token', 'device token is unregistered')),
        message,
        TIMEOUT_MS,
      );
      expect(outcome).toEqual({
        kind: 'non-retriable',
        errorCode: 'invalid_token',
        errorMessage: 'device token is unregistered',
      });
    });

    it('ThrottledDeliveryError with Retry-After → throttled carrying retryAfterMs', async () => {
      const outcome = await attemptDelivery(
        rejecting(new ThrottledDeliveryError(30_000, 'provider_429', 'rate limited')),
        message,
        TIMEOUT_MS,
      );
      expect(outcome).toEqual({
        kind: 'throttled',
        retryAfterMs: 30_000,
        errorCode: 'provider_429',
        errorMessage: 'rate limited',
      });
    });

    it('ThrottledDeliveryError without Retry-After → throttled with null retryAfterMs', async () => {
      const outcome = await attemptDelivery(
        rejecting(new ThrottledDeliveryError()),
        message,
        TIMEOUT_MS,
      );
      expect(outcome).toEqual({
        kind: 'throttled',
        retryAfterMs: null,
        errorCode: 'provider_throttled',
        errorMessage: 'provider_throttled',
      });
    });

    it('a team-defined DeliveryError subclass is classified by its `retriable` flag', async () => {
      const outcome = await attemptDelivery(
        rejecting(new CustomPermanentError()),
        message,
        TIMEOUT_MS,
      );
      expect(outcome).toEqual({
        kind: 'non-retriable',
        errorCode: 'template_revoked',
        errorMessage: 'template was revoked',
      });
    });

    it('a delivery error thrown synchronously is classified the same', async () => {
      const adapter = new FakeAdapter(() => {
        throw new NonRetriableDeliveryError('invalid_address');
      });
      const outcome = await attemptDelivery(adapter, message, TIMEOUT_MS);
      expect(outcome).toEqual({
        kind: 'non-retriable',
        errorCode: 'invalid_address',
        errorMessage: 'invalid_address',
      });
    });
  });

  describe('anything else thrown is retriable, never a crash', () => {
    it('a plain Error → retriable provider_error with its message', async () => {
      const outcome = await attemptDelivery(
        rejecting(new Error('socket hang up')),
        message,
        TIMEOUT_MS,
      );
      expect(outcome).toEqual({
        kind: 'retriable',
        errorCode: 'provider_error',
        errorMessage: 'socket hang up',
      });
    });

    it('a TypeError thrown synchronously → retriable provider_error', async () => {
      const adapter = new FakeAdapter(() => {
        throw new TypeError('cannot read properties of undefined');
      });
      const outcome = await attemptDelivery(adapter, message, TIMEOUT_MS);
      expect(outcome.kind).toBe('retriable');
      expect(outcome).toMatchObject({ errorCode: 'provider_error' });
    });

    it.each([
      ['a string', `failed for ${ADDRESS}`, 'string'],
      ['undefined', undefined, 'undefined'],
      ['null', null, 'object'],
      ['a number', 500, 'number'],
      ['a plain object', { status: 502, to: ADDRESS }, 'object'],
    ])('throwing %s → retriable provider_error_non_error', async (_label, thrown, type) => {
      const outcome = await attemptDelivery(rejecting(thrown), message, TIMEOUT_MS);
      // Only the type is told: the value itself may hold the address.
      expect(outcome).toEqual({
        kind: 'retriable',
        errorCode: 'provider_error_non_error',
        errorMessage: `provider adapter threw a non-Error value (${type})`,
      });
      expectNoPersonalData((outcome as { errorMessage: string }).errorMessage);
    });

    it('throwing undefined synchronously → retriable, no crash', async () => {
      const adapter = new FakeAdapter(() => {
        throw undefined;
      });
      await expect(attemptDelivery(adapter, message, TIMEOUT_MS)).resolves.toMatchObject({
        kind: 'retriable',
        errorCode: 'provider_error_non_error',
      });
    });
  });

  describe('a result without a usable providerMessageId is retriable', () => {
    it.each([
      ['undefined', undefined],
      ['null', null],
      ['{}', {}],
      ['a numeric id', { providerMessageId: 42 }],
      ['a null id', { providerMessageId: null }],
      ['an empty id', { providerMessageId: '' }],
      ['a blank id', { providerMessageId: '   ' }],
      ['a bare string', 'sg-42'],
    ])('resolving %s → retriable provider_invalid_result', async (_label, result) => {
      const adapter = new FakeAdapter(() => Promise.resolve(result));
      const outcome = await attemptDelivery(adapter, message, TIMEOUT_MS);
      expect(outcome).toEqual({
        kind: 'retriable',
        errorCode: 'provider_invalid_result',
        errorMessage: 'provider adapter returned no providerMessageId',
      });
    });
  });

  describe('timeout', () => {
    const SHORT_TIMEOUT_MS = 50;

    it('cuts an adapter that never settles and ignores its signal → retriable provider_timeout', async () => {
      const adapter = new FakeAdapter(() => new Promise<never>(() => undefined));
      const started = Date.now();
      const outcome = await attemptDelivery(adapter, message, SHORT_TIMEOUT_MS);
      const elapsed = Date.now() - started;
      // Unsettled: the call may still be running (the caller tracks it), unlike an adapter that gave up.
      expect(outcome).toEqual({
        kind: 'retriable',
        errorCode: 'provider_timeout',
        errorMessage: `no answer within the ${SHORT_TIMEOUT_MS} ms timeout and the 0 ms settle margin`,
        unsettled: true,
      });
      // not before the timeout (a little slack for timer granularity), and not much after it
      expect(elapsed).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 5);
      expect(elapsed).toBeLessThan(2_000);
    });

    it('aborts the signal handed to the adapter at the timeout', async () => {
      let abortedAfterMs: number | undefined;
      const started = Date.now();
      const adapter = new FakeAdapter(({ signal }) => {
        signal.addEventListener('abort', () => {
          abortedAfterMs = Date.now() - started;
        });
        return new Promise<never>(() => undefined);
      });
      await attemptDelivery(adapter, message, SHORT_TIMEOUT_MS);
      const { signal } = adapter.calls[0].context;
      expect(signal.aborted).toBe(true);
      expect(abortedAfterMs).toBeDefined();
      expect(abortedAfterMs!).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 5);
      // The reason tells an adapter that logs it why its call was stopped.
      expect(signal.reason).toBeInstanceOf(Error);
      expect((signal.reason as Error).message).toBe(
        `provider call exceeded ${SHORT_TIMEOUT_MS} ms`,
      );
    });

    it('an adapter that honours the signal and rejects with an AbortError is still a timeout', async () => {
      const adapter = new FakeAdapter(
        ({ signal }) =>
          new Promise<never>((_, reject) => {
            signal.addEventListener('abort', () =>
              reject(new DOMException('aborted', 'AbortError')),
            );
          }),
      );
      const outcome = await attemptDelivery(adapter, message, SHORT_TIMEOUT_MS);
      expect(outcome).toMatchObject({ kind: 'retriable', errorCode: 'provider_timeout' });
    });

    it('an adapter that answers before the timeout is not cut', async () => {
      const adapter = new FakeAdapter(
        () =>
          new Promise((resolve) =>
            setTimeout(() => resolve({ providerMessageId: 'late-but-ok' }), 10),
          ),
      );
      const outcome = await attemptDelivery(adapter, message, 500);
      expect(outcome).toEqual({ kind: 'sent', providerMessageId: 'late-but-ok' });
      expect(adapter.calls[0].context.signal.aborted).toBe(false);
    });
  });

  describe('interrupt', () => {
    it('an interrupt already fired → interrupted, the adapter is not called', async () => {
      const interrupt = new AbortController();
      interrupt.abort(new Error('lease lost'));
      const adapter = new FakeAdapter(async () => ({ providerMessageId: 'x' }));
      const outcome = await attemptDelivery(adapter, message, TIMEOUT_MS, interrupt.signal);
      expect(outcome).toEqual({ kind: 'interrupted', errorCode: 'worker_interrupted' });
      expect(adapter.calls).toHaveLength(0);
    });

    it('an interrupt during the call → interrupted, and the adapter signal is aborted', async () => {
      const interrupt = new AbortController();
      const adapter = new FakeAdapter(() => {
        setTimeout(() => interrupt.abort(new Error('application shutdown')), 10);
        return new Promise<never>(() => undefined);
      });
      const started = Date.now();
      const outcome = await attemptDelivery(adapter, message, 5_000, interrupt.signal);
      expect(outcome).toEqual({ kind: 'interrupted', errorCode: 'worker_interrupted' });
      expect(adapter.calls[0].context.signal.aborted).toBe(true);
      // ended by the interrupt, well before the 5 s timeout
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    it('an interrupt with an adapter that rejects on abort → interrupted, not a failure', async () => {
      const interrupt = new AbortController();
      const adapter = new FakeAdapter(
        ({ signal }) =>
          new Promise<never>((_, reject) => {
            signal.addEventListener('abort', () =>
              reject(new RetriableDeliveryError('connection_aborted')),
            );
            setTimeout(() => interrupt.abort(), 5);
          }),
      );
      const outcome = await attemptDelivery(adapter, message, 5_000, interrupt.signal);
      expect(outcome).toEqual({ kind: 'interrupted', errorCode: 'worker_interrupted' });
    });

    it('an interrupt after the call settled does not reach the finished call', async () => {
      const interrupt = new AbortController();
      const adapter = new FakeAdapter(async () => ({ providerMessageId: 'sg-9' }));
      const outcome = await attemptDelivery(adapter, message, TIMEOUT_MS, interrupt.signal);
      interrupt.abort();
      expect(outcome).toEqual({ kind: 'sent', providerMessageId: 'sg-9' });
      expect(adapter.calls[0].context.signal.aborted).toBe(false);
    });

    it('an interrupt that fires as the adapter failure comes in → interrupted, not that failure', async () => {
      // The failure may be the interrupt's doing (a connection torn down by the shutdown).
      const interrupt = new AbortController();
      const outcome = await attemptDelivery(
        rejecting(new RetriableDeliveryError('connection_reset')),
        message,
        TIMEOUT_MS,
        interrupt.signal,
        // Told before the attempt's own wait on the call: the interrupt fires first.
        {
          onCallStarted: (call) => {
            void call.catch(() => interrupt.abort());
          },
        },
      );
      expect(interrupt.signal.aborted).toBe(true);
      expect(outcome).toEqual({ kind: 'interrupted', errorCode: 'worker_interrupted' });
    });

    it('an interrupt right after the write-off leaves the attempt a timeout', async () => {
      // Written off as a timeout: a late success is handed over as such, the outcome must agree.
      jest.useFakeTimers();
      try {
        const interrupt = new AbortController();
        const adapter = new FakeAdapter(() => new Promise<never>(() => undefined));
        const pending = attemptDelivery(adapter, message, 30, interrupt.signal, {
          settleMarginMs: 10,
        });
        setTimeout(() => interrupt.abort(), 41);
        // Written off at 40 ms; the interrupt a millisecond later finds the attempt decided.
        jest.advanceTimersByTime(41);
        expect(interrupt.signal.aborted).toBe(true);
        await expect(pending).resolves.toMatchObject({
          kind: 'retriable',
          errorCode: 'provider_timeout',
          unsettled: true,
        });
      } finally {
        jest.useRealTimers();
      }
    });

    it('a timeout is reported as a timeout even when an interrupt signal is supplied', async () => {
      const interrupt = new AbortController();
      const adapter = new FakeAdapter(() => new Promise<never>(() => undefined));
      const outcome = await attemptDelivery(adapter, message, 30, interrupt.signal);
      expect(outcome).toMatchObject({ kind: 'retriable', errorCode: 'provider_timeout' });
    });
  });

  describe('personal data in provider error messages', () => {
    it.each([
      [
        'RetriableDeliveryError',
        new RetriableDeliveryError('provider_5xx', `upstream refused ${ADDRESS}`),
      ],
      [
        'NonRetriableDeliveryError',
        new NonRetriableDeliveryError('invalid_address', `invalid recipient ${ADDRESS}`),
      ],
      [
        'ThrottledDeliveryError',
        new ThrottledDeliveryError(1_000, 'provider_429', `slow down sending to ${ADDRESS}`),
      ],
      ['Error', new Error(`rejected "${ADDRESS}"`)],
    ])('redacts the recipient address echoed in a %s', async (_label, error) => {
      const outcome = await attemptDelivery(rejecting(error), message, TIMEOUT_MS);
      const errorMessage = (outcome as { errorMessage: string }).errorMessage;
      expectNoPersonalData(errorMessage);
      expect(errorMessage).toContain('[redacted]');
      // the non-personal part of the text survives for operators
      expect(errorMessage.length).toBeGreaterThan('[redacted]'.length);
    });

    it('redacts an echoed body and subject', async () => {
      const outcome = await attemptDelivery(
        rejecting(
          new NonRetriableDeliveryError(
            'content_rejected',
            `spam filter: subject "${SUBJECT}", body "${BODY}"`,
          ),
        ),
        message,
        TIMEOUT_MS,
      );
      const errorMessage = (outcome as { errorMessage: string }).errorMessage;
      expectNoPersonalData(errorMessage);
      expect(errorMessage).not.toContain('Alice');
      expect(errorMessage).toContain('spam filter');
    });

    it('redacts a phone number recipient echoed by an SMS provider', async () => {
      const sms: OutgoingNotification = {
        ...message,
        channel: 'sms',
        recipientAddress: '+447700900123',
      };
      const outcome = await attemptDelivery(
        rejecting(
          new NonRetriableDeliveryError(
            'invalid_number',
            'The number +44 7700 900123 is unreachable',
          ),
        ),
        sms,
        TIMEOUT_MS,
      );
      const errorMessage = (outcome as { errorMessage: string }).errorMessage;
      expect(errorMessage).not.toContain('7700');
      expect(errorMessage).toContain('is unreachable');
    });

    // A body with what JSON escapes: quotes, a line break, a non-ASCII letter.
    const quoting: OutgoingNotification = {
      ...message,
      subject: 'Your "March" statement',
      body: 'Hello Alice,\nyour "March" statement of account 4411 is ready (résumé attached).',
    };
    it.each([
      ['URL-encoded', `bad to=${encodeURIComponent(ADDRESS)}`],
      ['JSON-escaped', `bad request ${JSON.stringify({ body: quoting.body })}`],
      ['JSON-encoded twice', `bad ${JSON.stringify(JSON.stringify({ subject: quoting.subject }))}`],
      ['cut to its first 40 characters', `content "${quoting.body.slice(0, 40)}..." rejected`],
      ['upper-cased', `TEMPLATE ${quoting.subject!.toUpperCase()} MISSING`],
    ])('redacts a value echoed %s', async (_label, text) => {
      const outcome = await attemptDelivery(
        rejecting(new NonRetriableDeliveryError('content_rejected', text)),
        quoting,
        TIMEOUT_MS,
      );
      const errorMessage = (outcome as { errorMessage: string }).errorMessage.toLowerCase();
      for (const value of [quoting.recipientAddress, quoting.subject!, quoting.body]) {
        for (let i = 0; i + 8 <= value.length; i++) {
          expect(errorMessage).not.toContain(value.slice(i, i + 8).toLowerCase());
        }
      }
      expect(errorMessage).toContain('[redacted]');
    });

    it('redacts a device token echoed by a push provider', async () => {
      const token = 'fcm:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx';
      const push: OutgoingNotification = { ...message, channel: 'push', recipientAddress: token };
      const outcome = await attemptDelivery(
        rejecting(
          new NonRetriableDeliveryError('token_unregistered', `token ${token} is not registered`),
        ),
        push,
        TIMEOUT_MS,
      );
      const errorMessage = (outcome as { errorMessage: string }).errorMessage;
      expect(errorMessage).not.toContain(token);
      expect(errorMessage).toContain('is not registered');
    });
  });
});

describe('attemptDelivery: personal data in codes and message ids', () => {
  const TOKEN = 'fcm:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx';
  const push: OutgoingNotification = { ...message, channel: 'push', recipientAddress: TOKEN };
  const sms: OutgoingNotification = {
    ...message,
    channel: 'sms',
    recipientAddress: '+447700900123',
  };
  const sent = (id: string): FakeAdapter =>
    new FakeAdapter(() => Promise.resolve({ providerMessageId: id }));

  it.each<[string, DeliveryError, string, string]>([
    [
      'a non-retriable',
      new NonRetriableDeliveryError(TOKEN, 'unregistered'),
      'non-retriable',
      'provider_rejected',
    ],
    ['a retriable', new RetriableDeliveryError(TOKEN, 'try later'), 'retriable', 'provider_error'],
    [
      'a throttled',
      new ThrottledDeliveryError(1_000, TOKEN, 'slow down'),
      'throttled',
      'provider_throttled',
    ],
  ])('replaces %s error code equal to the push token', async (_label, error, kind, fallback) => {
    const outcome = await attemptDelivery(rejecting(error), push, 1_000);
    expect(outcome).toMatchObject({ kind, errorCode: fallback });
  });

  it('replaces a code holding half the push token', async () => {
    const error = new NonRetriableDeliveryError(`bad_${TOKEN.slice(20)}`, 'unregistered');
    const outcome = await attemptDelivery(rejecting(error), push, 1_000);
    expect(outcome).toMatchObject({ errorCode: 'provider_rejected' });
  });

  it.each(['447700900123', '+447700900123', '0044-7700-900123'])(
    "replaces a code equal to the row's phone number (%s)",
    async (code) => {
      const outcome = await attemptDelivery(
        rejecting(new RetriableDeliveryError(code)),
        sms,
        1_000,
      );
      expect(outcome).toMatchObject({ kind: 'retriable', errorCode: 'provider_error' });
      expect(JSON.stringify(outcome)).not.toContain('7700');
    },
  );

  it('replaces a code that is some other phone number', async () => {
    const outcome = await attemptDelivery(
      rejecting(new NonRetriableDeliveryError('15551234567')),
      message,
      1_000,
    );
    expect(outcome).toMatchObject({ errorCode: 'provider_rejected' });
  });

  it('replaces a code holding the upper-cased address', async () => {
    const outcome = await attemptDelivery(
      rejecting(new NonRetriableDeliveryError('INVALID_ALICE.SMITH', 'bad mailbox')),
      message,
      1_000,
    );
    expect(outcome).toMatchObject({ errorCode: 'provider_rejected' });
  });

  it('keeps a plain code and the message built from it', async () => {
    const outcome = await attemptDelivery(
      rejecting(new NonRetriableDeliveryError('invalid_number')),
      sms,
      1_000,
    );
    expect(outcome).toEqual({
      kind: 'non-retriable',
      errorCode: 'invalid_number',
      errorMessage: 'invalid_number',
    });
  });

  it.each([
    ['the address', `msg-${ADDRESS}-1718000000`],
    ['the URL-encoded address', `msg-${encodeURIComponent(ADDRESS)}-1718000000`],
    ['the upper-cased address', `MSG-${ADDRESS.toUpperCase()}`],
    ['half the subject', `queued:${SUBJECT.slice(0, 10)}`],
  ])('replaces a message id carrying %s by a stand-in derived from it', async (_label, id) => {
    const outcome = await attemptDelivery(sent(id), message, 1_000);
    expect(outcome.kind).toBe('sent');
    const stored = outcome.kind === 'sent' ? outcome.providerMessageId : '';
    expect(stored).toMatch(/^redacted:[0-9a-f]{16}$/);
    expect(stored.toLowerCase()).not.toContain('alice');
    // An operator holding both ids can compute it: SHA-256 over the notification id, NUL, the provider id.
    const digest = createHash('sha256').update(`${message.id}\u0000${id}`).digest('hex');
    expect(stored).toBe(`redacted:${digest.slice(0, 16)}`);
    // The same id gives the same stand-in (operators can correlate), another id another one.
    await expect(attemptDelivery(sent(id), message, 1_000)).resolves.toEqual(outcome);
    await expect(attemptDelivery(sent(`${id}x`), message, 1_000)).resolves.not.toEqual(outcome);
  });

  it('replaces a message id equal to the push token', async () => {
    const outcome = await attemptDelivery(sent(TOKEN), push, 1_000);
    expect(outcome).toEqual({
      kind: 'sent',
      providerMessageId: expect.stringMatching(/^redacted:/),
    });
  });

  it.each([
    '<20260314120000.4f1c@mx.provider.example>',
    '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
    '1718000000123',
  ])('keeps an ordinary message id that only looks like an address or a number: %p', async (id) => {
    await expect(attemptDelivery(sent(id), message, 1_000)).resolves.toEqual({
      kind: 'sent',
      providerMessageId: id,
    });
  });
});

describe('attemptDelivery: the HTTP status of a delivery error', () => {
  it.each<[string, DeliveryError, string]>([
    [
      'a retriable',
      new RetriableDeliveryError('http_503', 'upstream down', { httpStatus: 503 }),
      'HTTP 503: upstream down',
    ],
    [
      'a non-retriable',
      new NonRetriableDeliveryError('http_400', 'bad request', { httpStatus: 400 }),
      'HTTP 400: bad request',
    ],
    [
      'a throttled',
      new ThrottledDeliveryError(5_000, 'http_429', 'slow down', { httpStatus: 429 }),
      'HTTP 429: slow down',
    ],
  ])('prefixes the stored message of %s error with its status', async (_label, error, stored) => {
    const outcome = await attemptDelivery(rejecting(error), message, 1_000);
    expect(outcome).toMatchObject({ errorMessage: stored });
  });

  it('exposes the status on the error, and none when not given', () => {
    expect(new RetriableDeliveryError('x', 'y', { httpStatus: 502 }).httpStatus).toBe(502);
    expect(new RetriableDeliveryError('x').httpStatus).toBeUndefined();
    const cause = new Error('socket');
    const withCause = new NonRetriableDeliveryError('x', 'y', { cause, httpStatus: 404 });
    expect(withCause.cause).toBe(cause);
    expect(withCause.httpStatus).toBe(404);
  });

  it('redacts the text after the prefix', async () => {
    const error = new NonRetriableDeliveryError(
      'http_422',
      `{"error":"invalid to","to":"${ADDRESS.replace('@', '\\u0040')}"}`,
      { httpStatus: 422 },
    );
    const outcome = await attemptDelivery(rejecting(error), message, 1_000);
    const errorMessage = (outcome as { errorMessage: string }).errorMessage;
    expect(errorMessage).toMatch(/^HTTP 422: \{"error":"invalid to","to":"\[redacted\]"\}$/);
  });

  it.each([100, 599])('prefixes the first and the last status there is (%p)', async (status) => {
    const error = new RetriableDeliveryError('provider_http', 'odd answer', { httpStatus: status });
    const outcome = await attemptDelivery(rejecting(error), message, 1_000);
    expect(outcome).toMatchObject({ errorMessage: `HTTP ${status}: odd answer` });
  });

  it.each([0, 42, 99, 600, 503.5, Number.NaN, '503'])(
    'stores no prefix for a status that is not one (%p)',
    async (status) => {
      const error = new RetriableDeliveryError('provider_5xx', 'upstream down', {
        httpStatus: status as number,
      });
      const outcome = await attemptDelivery(rejecting(error), message, 1_000);
      expect(outcome).toMatchObject({ errorMessage: 'upstream down' });
    },
  );
});

describe('attemptDelivery: values that must not fail the row write', () => {
  it('replaces NUL in a delivered message id (PostgreSQL text cannot hold it) and caps its length', async () => {
    const withNul = await attemptDelivery(
      new FakeAdapter(() => Promise.resolve({ providerMessageId: 'a\u0000b' })),
      message,
      1_000,
    );
    expect(withNul).toEqual({ kind: 'sent', providerMessageId: 'a\uFFFDb' });

    const huge = await attemptDelivery(
      new FakeAdapter(() => Promise.resolve({ providerMessageId: 'x'.repeat(50_000) })),
      message,
      1_000,
    );
    expect(huge.kind).toBe('sent');
    expect(huge.kind === 'sent' && huge.providerMessageId.length).toBe(
      MAX_PROVIDER_MESSAGE_ID_LENGTH,
    );
  });

  it('classifies an error whose message getter throws as a retriable failure instead of throwing', async () => {
    const unreadable = new Error('x');
    Object.defineProperty(unreadable, 'message', {
      get() {
        throw new Error('getter exploded');
      },
    });
    await expect(attemptDelivery(rejecting(unreadable), message, 1_000)).resolves.toEqual({
      kind: 'retriable',
      errorCode: 'provider_error_unreadable',
      errorMessage: 'provider adapter threw an error that could not be read',
    });
  });

  it('classifies a thrown object that cannot even be type-checked, after the timeout, as unreadable', async () => {
    // A Proxy whose prototype trap throws: `instanceof DeliveryError` itself throws.
    const unreadable: unknown = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap exploded');
        },
      },
    );
    const adapter = new FakeAdapter(
      ({ signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(unreadable), { once: true }),
        ),
    );
    await expect(
      attemptDelivery(adapter, message, 20, undefined, { settleMarginMs: 200 }),
    ).resolves.toEqual({
      kind: 'retriable',
      errorCode: 'provider_error_unreadable',
      errorMessage: 'provider adapter threw an error that could not be read',
    });
  });
});
