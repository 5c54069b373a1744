import type { ProviderAdapter } from '../providers/provider-adapter';
import { FakeWebhookServer, type RecordedWebhookRequest } from './fake-webhook-server';
import type {
  ProviderAdapterContractHarnessFactory,
  ProviderBehaviour,
  ProviderBehaviourOptions,
} from './provider-adapter-contract-harness';

export interface WebhookContractHarnessOptions {
  /** Where the fake provider puts the message id in its 2xx answer. Default `id`. */
  readonly messageIdField?: string;
}

/**
 * A contract harness for adapters that speak HTTP to one URL, such as a
 * `WebhookProviderAdapter` subclass: `createAdapter` gets the URL of a fresh
 * `FakeWebhookServer` per check. The fake answers the way the built-in webhook
 * adapter expects (2xx JSON id, 503, 400, 429 with Retry-After), and its
 * failure answers echo the request, as real providers do, so that an adapter
 * copying the body into its errors is caught.
 */
export function webhookContractHarness(
  createAdapter: (url: string) => ProviderAdapter,
  options: WebhookContractHarnessOptions = {},
): ProviderAdapterContractHarnessFactory {
  const messageIdField = options.messageIdField ?? 'id';
  return {
    capabilities: { idempotencyKey: true, failures: true, throttling: true, hanging: true },
    async create() {
      const server = await FakeWebhookServer.start();
      return {
        adapter: createAdapter(server.url),
        respondWith(behaviour: ProviderBehaviour, behaviourOptions: ProviderBehaviourOptions = {}) {
          server.respondWith((request) => replyTo(request, behaviour, behaviourOptions));
        },
        lastIdempotencyKey() {
          const key = server.lastRequest()?.headers['idempotency-key'];
          return Array.isArray(key) ? key.join(', ') : key;
        },
        close: () => server.close(),
      };
    },
  };

  function replyTo(
    request: RecordedWebhookRequest,
    behaviour: ProviderBehaviour,
    { retryAfterMs }: ProviderBehaviourOptions,
  ) {
    const echo = { request: request.body };
    switch (behaviour) {
      case 'success':
        return { status: 200, body: { [messageIdField]: `fake-message-${Date.now()}` } };
      case 'retriable':
        return { status: 503, body: { error: 'temporarily unavailable', ...echo } };
      case 'non-retriable':
        return { status: 400, body: { error: 'invalid recipient', ...echo } };
      case 'throttled':
        return {
          status: 429,
          headers:
            retryAfterMs === undefined
              ? undefined
              : { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) },
          body: { error: 'slow down', ...echo },
        };
      case 'hang':
        return 'hang' as const;
    }
  }
}
