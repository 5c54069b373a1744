import { NotificationsRetryError } from './notifications-retry.error';

/** Two adapters claim the same provider key: which one sends would be a guess, so start fails. */
export class DuplicateProviderKeyError extends NotificationsRetryError {
  readonly code = 'duplicate_provider_key';

  constructor(
    readonly providerKey: string,
    readonly adapters: readonly string[],
  ) {
    super(
      `Provider key "${providerKey}" is claimed by more than one adapter: ${adapters.join(', ')}`,
    );
  }
}
