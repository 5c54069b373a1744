import { describeValue } from './describe-value';
import { NotificationsRetryError } from './notifications-retry.error';

/**
 * A custom `ChannelCatalog` returned something other than a list of channel
 * configurations. Nothing can be told about any channel, so the cycle fails
 * (lease released, every row left as it was) instead of guessing.
 */
export class InvalidChannelCatalogError extends NotificationsRetryError {
  readonly code = 'invalid_channel_catalog';

  constructor(
    readonly catalog: string,
    readonly value: unknown,
  ) {
    super(
      `ChannelCatalog ${catalog}.getChannels() must resolve to an array of channel configs; got ${
        Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value
      } ${describeValue(value).slice(0, 100)}`,
    );
  }
}
