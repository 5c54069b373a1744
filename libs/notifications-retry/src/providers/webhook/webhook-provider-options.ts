/** What a `WebhookProviderAdapter` subclass passes to `super()`. */
export interface WebhookProviderOptions {
  /** Absolute http: or https: URL the notification is POSTed to. */
  readonly url: string | URL;
  /** Sent with every request, e.g. `authorization`. Cannot replace `content-type` or `Idempotency-Key`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Top-level field of the 2xx JSON answer that holds the provider's message id. Default `id`. */
  readonly messageIdField?: string;
}
