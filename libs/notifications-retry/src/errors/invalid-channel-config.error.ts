import { describeValue } from './describe-value';
import { NotificationsRetryError } from './notifications-retry.error';

/** Where the default catalog's configs come from; a custom catalog names itself instead. */
export const CHANNEL_TABLE_SOURCE = 'notification_channels row';

/**
 * A channel configuration the worker cannot use: a `notification_channels` row,
 * or an entry a custom `ChannelCatalog` returned. The channel is left out of the
 * cycle (its rows wait) while every other channel carries on.
 */
export class InvalidChannelConfigError extends NotificationsRetryError {
  readonly code = 'invalid_channel_config';

  constructor(
    readonly channel: string,
    /** The table column, or the `ChannelConfig` field of a custom catalog's entry. */
    readonly column: string,
    readonly value: unknown,
    readonly requirement: string,
    /** Who supplied the configuration, e.g. `ChannelCatalog TeamCatalog channel`. */
    readonly source: string = CHANNEL_TABLE_SOURCE,
  ) {
    super(`${source} "${channel}": ${column} ${requirement}; got ${describeValue(value)}`);
  }
}
