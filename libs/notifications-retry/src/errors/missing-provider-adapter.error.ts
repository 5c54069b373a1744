import { NotificationsRetryError } from './notifications-retry.error';

/**
 * Enabled channels name provider keys that no registered adapter has. Caught at
 * start, because at run time those channels' rows would only wait, silently.
 * The message lists what was registered next to what is needed, so a typo or a
 * module left out shows at a glance.
 */
export class MissingProviderAdapterError extends NotificationsRetryError {
  readonly code = 'missing_provider_adapter';

  constructor(
    readonly missing: ReadonlyArray<{ readonly channel: string; readonly providerKey: string }>,
    /** The keys the registered adapters have, feature flags aside. */
    readonly registeredProviderKeys: readonly string[],
  ) {
    super(
      `No registered provider adapter has the provider key that these enabled channels name: ${describeNeeds(
        missing,
      )}. Registered provider keys: ${
        registeredProviderKeys.length > 0 ? registeredProviderKeys.map(quoted).join(', ') : 'none'
      }. Check that the module declaring the adapter is imported by the application, that ` +
        'notification_channels.provider_key matches the key in @NotificationProvider(...) exactly, ' +
        'and that the adapter class (the class of the instance, whatever the provider form) carries ' +
        '@NotificationProvider(...); or disable the channel',
    );
  }
}

function describeNeeds(
  missing: ReadonlyArray<{ readonly channel: string; readonly providerKey: string }>,
): string {
  const channelsByKey = new Map<string, string[]>();
  for (const { channel, providerKey } of missing) {
    channelsByKey.set(providerKey, [...(channelsByKey.get(providerKey) ?? []), channel]);
  }
  return [...channelsByKey]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([providerKey, channels]) => {
      const sorted = [...channels].sort();
      return `${quoted(providerKey)} (${sorted.length > 1 ? 'channels' : 'channel'} ${sorted
        .map(quoted)
        .join(', ')})`;
    })
    .join(', ');
}

const quoted = (text: string): string => JSON.stringify(text);
