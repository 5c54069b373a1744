import { createServer } from 'node:net';
import { Injectable } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  DeliveryError,
  InvalidProviderAdapterError,
  NonRetriableDeliveryError,
  NotificationProvider,
  RetriableDeliveryError,
  ThrottledDeliveryError,
  WebhookProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type WebhookProviderOptions,
} from '@pin/notifications-retry';
import { ProviderAdapterRegistry } from '@pin/notifications-retry/providers/provider-adapter.registry';
import { FakeWebhookServer, sampleNotification } from '@pin/notifications-retry/testing';

/** How a team would subclass it, minus the config lookup. */
class AcmeWebhookAdapter extends WebhookProviderAdapter {
  constructor(url: string, options: Omit<WebhookProviderOptions, 'url'> = {}) {
    super({ url, headers: { authorization: 'Bearer acme-test-token' }, ...options });
  }
}

function contextFor(
  message: OutgoingNotification,
  signal = new AbortController().signal,
): SendContext {
  return { idempotencyKey: message.id, signal };
}

/** The rejection of `promise`; fails the test if it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<DeliveryError> {
  const error: unknown = await promise.then(
    () => {
      throw new Error('expected the send to reject, but it resolved');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

function expectNoPersonalData(error: Error, message: OutgoingNotification): void {
  for (const value of [message.recipientAddress, message.subject, message.body]) {
    expect(error.message).not.toContain(value);
  }
}

async function eventually(condition: () => boolean, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('WebhookProviderAdapter against a local HTTP server', () => {
  let server: FakeWebhookServer;
  let adapter: AcmeWebhookAdapter;
  let message: OutgoingNotification;

  beforeEach(async () => {
    server = await FakeWebhookServer.start();
    adapter = new AcmeWebhookAdapter(server.url);
    message = sampleNotification();
  });

  afterEach(async () => {
    await server.close();
  });

  describe('2xx', () => {
    it('POSTs the notification as JSON with the NotificationId as Idempotency-Key and returns the provider id', async () => {
      server.respondWith({ status: 200, body: { id: 'acme-msg-1', status: 'queued' } });

      const result = await adapter.send(message, contextFor(message));

      expect(result).toEqual({ providerMessageId: 'acme-msg-1' });
      expect(server.requests).toHaveLength(1);
      const request = server.lastRequest()!;
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/webhook');
      expect(request.headers['idempotency-key']).toBe(message.id);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers.authorization).toBe('Bearer acme-test-token');
      expect(JSON.parse(request.body)).toEqual({
        id: message.id,
        tenantId: message.tenantId,
        channel: message.channel,
        to: message.recipientAddress,
        subject: message.subject,
        body: message.body,
      });
    });

    it('keeps the path and query of the configured url', async () => {
      const withQuery = new AcmeWebhookAdapter(`${server.url}/sms?tenant=demo`);
      await withQuery.send(message, contextFor(message));
      expect(server.lastRequest()!.path).toBe('/webhook/sms?tenant=demo');
    });

    it("the team's headers cannot replace content-type or Idempotency-Key", async () => {
      const overriding = new AcmeWebhookAdapter(server.url, {
        headers: { 'Content-Type': 'text/plain', 'Idempotency-Key': 'constant', 'x-team': 'a' },
      });
      await overriding.send(message, contextFor(message));
      const { headers } = server.lastRequest()!;
      expect(headers['content-type']).toBe('application/json');
      expect(headers['idempotency-key']).toBe(message.id);
      expect(headers['x-team']).toBe('a');
    });

    it('reads the message id from messageIdField when the provider names it otherwise', async () => {
      server.respondWith({ status: 202, body: { id: 'not-this-one', messageId: 'acme-msg-2' } });
      const custom = new AcmeWebhookAdapter(server.url, { messageIdField: 'messageId' });
      await expect(custom.send(message, contextFor(message))).resolves.toEqual({
        providerMessageId: 'acme-msg-2',
      });
    });

    it.each([
      ['an object without the field', 200, { status: 'queued' }],
      ['an empty id', 200, { id: '  ' }],
      ['a number as id', 201, { id: 42 }],
      ['a body that is not JSON', 200, 'accepted'],
      ['no body', 204, undefined],
    ])('%s → retriable provider_invalid_response', async (_case, status, body) => {
      server.respondWith({ status, body });
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.code).toBe('provider_invalid_response');
      expect(error.httpStatus).toBe(status);
    });

    it('a 2xx body that quotes the notification is not quoted in the error', async () => {
      server.respondWith({ status: 200, body: `not json: ${message.recipientAddress}` });
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error.code).toBe('provider_invalid_response');
      expectNoPersonalData(error, message);
      expect(error.cause).toBeUndefined();
    });
  });

  describe('error statuses (the server echoes the request in its body, as providers do)', () => {
    const echoing = (status: number, headers?: Record<string, string>) => () =>
      server.respondWith((request) => ({
        status,
        headers,
        body: { error: 'rejected', request: JSON.parse(request.body) as unknown },
      }));

    it('400 → NonRetriableDeliveryError http_400, without the body in the message', async () => {
      echoing(400)();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(NonRetriableDeliveryError);
      expect(error.code).toBe('http_400');
      expect(error.message).toBe('webhook answered HTTP 400');
      expect(error.httpStatus).toBe(400);
      expectNoPersonalData(error, message);
    });

    it.each([401, 404, 422])('%p → non-retriable', async (status) => {
      echoing(status)();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(NonRetriableDeliveryError);
      expect(error.code).toBe(`http_${status}`);
    });

    it('500 → RetriableDeliveryError http_500, without the body in the message', async () => {
      echoing(500)();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.code).toBe('http_500');
      expectNoPersonalData(error, message);
    });

    it.each([408, 502, 503, 504])('%p → retriable', async (status) => {
      echoing(status)();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.code).toBe(`http_${status}`);
      expect(error.httpStatus).toBe(status);
    });

    it('429 with Retry-After in seconds → ThrottledDeliveryError with that delay', async () => {
      echoing(429, { 'retry-after': '120' })();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(ThrottledDeliveryError);
      expect((error as ThrottledDeliveryError).retryAfterMs).toBe(120_000);
      expect(error.code).toBe('http_429');
      expectNoPersonalData(error, message);
    });

    it('429 with Retry-After as an HTTP-date → ThrottledDeliveryError with the time until then', async () => {
      const at = new Date(Date.now() + 90_000);
      echoing(429, { 'retry-after': at.toUTCString() })();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(ThrottledDeliveryError);
      // The header has whole seconds, so up to one second is cut off, plus the round trip.
      const { retryAfterMs } = error as ThrottledDeliveryError;
      expect(retryAfterMs).toBeGreaterThan(87_000);
      expect(retryAfterMs).toBeLessThanOrEqual(90_000);
    });

    it('429 without Retry-After → ThrottledDeliveryError without a delay', async () => {
      echoing(429)();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(ThrottledDeliveryError);
      expect((error as ThrottledDeliveryError).retryAfterMs).toBeNull();
    });

    it('503 with Retry-After → ThrottledDeliveryError (the provider paces us)', async () => {
      echoing(503, { 'retry-after': '30' })();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(ThrottledDeliveryError);
      expect((error as ThrottledDeliveryError).retryAfterMs).toBe(30_000);
      expect(error.code).toBe('http_503');
    });

    it('302 → non-retriable, and the redirect is not followed', async () => {
      server.respondWith((request) =>
        request.path === '/webhook'
          ? { status: 302, headers: { location: '/elsewhere' } }
          : { status: 200, body: { id: 'followed' } },
      );
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(NonRetriableDeliveryError);
      expect(error.code).toBe('http_302');
      expect(server.requests).toHaveLength(1);
    });

    it('does not wait for the body of an error answer, and releases its connection', async () => {
      // Headers and part of a body, then nothing: reading the body would never end.
      server.respondWith({ status: 400, body: { error: 'x'.repeat(1_000) }, keepOpen: true });
      const started = Date.now();
      const error = await rejectionOf(adapter.send(message, contextFor(message)));
      expect(error.code).toBe('http_400');
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await eventually(() => server.disconnectsBeforeReply === 1, 1_000)).toBe(true);
    });
  });

  describe('transport', () => {
    it('a slow answer is cut by the AbortSignal: rejects promptly, retriable, and drops the connection', async () => {
      server.respondWith({ status: 200, body: { id: 'too-late' }, delayMs: 5_000 });
      const controller = new AbortController();
      const sending = rejectionOf(adapter.send(message, contextFor(message, controller.signal)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(server.requests).toHaveLength(1);

      const abortedAt = Date.now();
      controller.abort(new Error('provider call exceeded 100 ms'));
      const error = await sending;

      expect(Date.now() - abortedAt).toBeLessThan(500);
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.code).toBe('provider_aborted');
      // The provider sees the client go away: the signal reached the socket, not only a race.
      expect(await eventually(() => server.disconnectsBeforeReply === 1, 1_000)).toBe(true);
    });

    it('an already aborted signal sends nothing', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await rejectionOf(
        adapter.send(message, contextFor(message, controller.signal)),
      );
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.code).toBe('provider_aborted');
      expect(server.requests).toHaveLength(0);
    });

    it('connection refused → retriable provider_unreachable', async () => {
      const port = await closedPort();
      const unreachable = new AcmeWebhookAdapter(`http://127.0.0.1:${port}/webhook`);
      const error = await rejectionOf(unreachable.send(message, contextFor(message)));
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.code).toBe('provider_unreachable');
      expect(error.message).toBe('webhook unreachable (ECONNREFUSED)');
    });
  });
});

describe('WebhookProviderAdapter options', () => {
  class Configured extends WebhookProviderAdapter {}

  it.each([
    ['no url', { url: '' }, 'needs a webhook url in super({ url }); got none'],
    ['a relative url', { url: '/hooks?token=s3cret-token' }, 'needs an absolute webhook url'],
    [
      'a non-http url',
      { url: 'ftp://example.invalid/hooks' },
      'needs an http: or https: webhook url; got ftp:',
    ],
    [
      'an empty messageIdField',
      { url: 'https://example.invalid', messageIdField: '' },
      'needs a non-empty messageIdField',
    ],
    [
      'a header value with a line break',
      { url: 'https://example.invalid', headers: { authorization: 'Bearer s3cret-token\r\nX: 1' } },
      'has an invalid header',
    ],
  ])(
    'refuses %s with an InvalidProviderAdapterError naming the class',
    (_case, options, reason) => {
      const build = (): Configured => new Configured(options);
      expect(build).toThrow(InvalidProviderAdapterError);
      expect(build).toThrow(`Provider adapter Configured ${reason}`);
      // Webhook URLs and headers hold secrets: never echoed.
      expect(build).not.toThrow('s3cret-token');
    },
  );
});

describe('WebhookProviderAdapter in a Nest application', () => {
  class AcmeWebhookConfig {
    constructor(readonly url: string) {}
  }

  @Injectable()
  @NotificationProvider('acme-webhook')
  class DiscoveredAcmeAdapter extends WebhookProviderAdapter {
    constructor(config: AcmeWebhookConfig) {
      super({ url: config.url });
    }
  }

  @Injectable()
  @NotificationProvider('acme-forgot-super')
  class ForgotConstructorAdapter extends WebhookProviderAdapter {}

  it('a decorated subclass with injected configuration is discovered under its key and sends', async () => {
    const server = await FakeWebhookServer.start();
    try {
      server.respondWith({ status: 200, body: { id: 'via-nest' } });
      const moduleRef = await Test.createTestingModule({
        imports: [DiscoveryModule],
        providers: [
          ProviderAdapterRegistry,
          { provide: AcmeWebhookConfig, useValue: new AcmeWebhookConfig(server.url) },
          DiscoveredAcmeAdapter,
        ],
      }).compile();
      await moduleRef.init();

      const found = moduleRef.get(ProviderAdapterRegistry).lookup('acme-webhook');
      if (found.kind !== 'enabled') throw new Error(`acme-webhook is ${found.kind}`);
      expect(found.adapter).toBeInstanceOf(DiscoveredAcmeAdapter);
      const message = sampleNotification();
      await expect(found.adapter.send(message, contextFor(message))).resolves.toEqual({
        providerMessageId: 'via-nest',
      });
      await moduleRef.close();
    } finally {
      await server.close();
    }
  });

  it('a subclass that does not pass its options to super() stops start-up with a clear error', async () => {
    const compiling = Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [ProviderAdapterRegistry, ForgotConstructorAdapter],
    }).compile();
    await expect(compiling).rejects.toThrow(InvalidProviderAdapterError);
    await expect(compiling).rejects.toThrow(
      'Provider adapter ForgotConstructorAdapter must call super({ url }) from its own constructor',
    );
  });
});
