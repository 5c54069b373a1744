import { NotificationsRetryError } from './notifications-retry.error';

/**
 * Enabled channels name provider keys that no adapter serves. Caught at start,
 * because at run time those channels' rows would only wait, silently.
 */
export class MissingProviderAdapterError extends NotificationsRetryError {
  readonly code = 'missing_provider_adapter';

  constructor(
    readonly missing: ReadonlyArray<{ readonly channel: string; readonly providerKey: string }>,
  ) {
    super(
      `No provider adapter serves ${missing
        .map(({ channel, providerKey }) => `"${providerKey}" (channel "${channel}")`)
        .join(', ')}: declare an @NotificationProvider() adapter for it, or disable the channel`,
    );
  }
}
