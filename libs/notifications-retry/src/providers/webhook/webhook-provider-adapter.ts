import { InvalidProviderAdapterError } from '../../errors/invalid-provider-adapter.error';
import { RetriableDeliveryError } from '../errors/retriable-delivery.error';
import {
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '../provider-adapter';
import { toWebhookPayload } from './webhook-payload';
import type { WebhookProviderOptions } from './webhook-provider-options';
import { webhookResponseError } from './webhook-response-error';

const DEFAULT_MESSAGE_ID_FIELD = 'id';
const NETWORK_ERROR_CODE = /^[A-Z][A-Z0-9_]+$/;

/**
 * Delivers by POSTing the notification as JSON to an HTTP endpoint. Subclass it
 * in your own module, pass the endpoint to `super()` and mark the subclass
 * `@Injectable() @NotificationProvider('your-key')`:
 *
 * ```ts
 * @Injectable()
 * @NotificationProvider('acme-sms')
 * export class AcmeSmsAdapter extends WebhookProviderAdapter {
 *   constructor(config: ConfigService) {
 *     super({ url: config.getOrThrow('ACME_SMS_URL') });
 *   }
 * }
 * ```
 *
 * The body is a `WebhookPayload`; the NotificationId goes in `Idempotency-Key`.
 * A 2xx JSON answer must carry the provider's message id at `messageIdField`.
 */
export abstract class WebhookProviderAdapter extends ProviderAdapter {
  private readonly url: URL;
  private readonly headers: Headers;
  private readonly messageIdField: string;

  constructor(options: WebhookProviderOptions) {
    super();
    const adapter = new.target.name;
    // Nest builds a subclass without its own constructor with no arguments at all.
    if (options === undefined || options === null) {
      throw new InvalidProviderAdapterError(
        adapter,
        'must call super({ url }) from its own constructor with the webhook options',
      );
    }
    this.url = webhookUrl(adapter, options.url);
    this.headers = baseHeaders(adapter, options.headers);
    const field = options.messageIdField ?? DEFAULT_MESSAGE_ID_FIELD;
    if (typeof field !== 'string' || field === '') {
      throw new InvalidProviderAdapterError(adapter, 'needs a non-empty messageIdField');
    }
    this.messageIdField = field;
  }

  override async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    const { idempotencyKey, signal } = context;
    const headers = new Headers(this.headers);
    headers.set('Idempotency-Key', idempotencyKey);

    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(toWebhookPayload(message)),
        signal,
        // See webhookResponseError: a 3xx is reported, not followed.
        redirect: 'manual',
      });
    } catch (error) {
      throw transportError(error, signal);
    }

    if (!response.ok) {
      // Unread bodies keep their socket busy until garbage collection.
      await discardBody(response);
      throw webhookResponseError(response.status, response.headers.get('retry-after'), Date.now());
    }
    return { providerMessageId: await this.readMessageId(response, signal) };
  }

  private async readMessageId(response: Response, signal: AbortSignal): Promise<string> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw signal.aborted
        ? abortedError()
        : new RetriableDeliveryError(
            'provider_invalid_response',
            `webhook answered HTTP ${response.status} but its body could not be read`,
            { cause: error, httpStatus: response.status },
          );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not kept as the cause: JSON.parse quotes the text it choked on, and that may be personal data.
      parsed = undefined;
    }
    const id = isRecord(parsed) ? parsed[this.messageIdField] : undefined;
    if (typeof id === 'string' && id.trim() !== '') return id;
    throw new RetriableDeliveryError(
      'provider_invalid_response',
      `webhook answered HTTP ${response.status} without a message id in "${this.messageIdField}"`,
      { httpStatus: response.status },
    );
  }
}

function webhookUrl(adapter: string, value: string | URL | undefined): URL {
  if (value === undefined || value === null || value === '') {
    throw new InvalidProviderAdapterError(
      adapter,
      'needs a webhook url in super({ url }); got none (is its configuration setting missing?)',
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The value is not shown: webhook URLs often carry a secret in the path or query.
    throw new InvalidProviderAdapterError(adapter, 'needs an absolute webhook url (not shown)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidProviderAdapterError(
      adapter,
      `needs an http: or https: webhook url; got ${url.protocol}`,
    );
  }
  return url;
}

function baseHeaders(adapter: string, extra: WebhookProviderOptions['headers']): Headers {
  let headers: Headers;
  try {
    headers = new Headers(extra);
  } catch {
    // Header values are typically credentials: name the problem, not the value.
    throw new InvalidProviderAdapterError(
      adapter,
      'has an invalid header name or value (not shown)',
    );
  }
  // Set after the team's headers so that they cannot replace it (nor Idempotency-Key, set per
  // request): the body is JSON whatever they say.
  headers.set('content-type', 'application/json');
  return headers;
}

function transportError(error: unknown, signal: AbortSignal): RetriableDeliveryError {
  // fetch rejects with the signal's reason, which may be any value: ask the signal instead.
  if (signal.aborted) return abortedError();
  const code = networkErrorCode(error);
  return new RetriableDeliveryError(
    'provider_unreachable',
    code === undefined ? 'webhook unreachable' : `webhook unreachable (${code})`,
    { cause: error },
  );
}

function abortedError(): RetriableDeliveryError {
  return new RetriableDeliveryError('provider_aborted', 'webhook request aborted');
}

/** ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET...: undici puts it on the cause of "fetch failed". */
function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && isRecord(current); depth++) {
    const code = current.code;
    if (typeof code === 'string' && NETWORK_ERROR_CODE.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

async function discardBody(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Already errored or aborted: nothing left to release.
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
