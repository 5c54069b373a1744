import { describeValue } from './describe-value';
import { NotificationsRetryError } from './notifications-retry.error';

/**
 * A `notification_channels` row the worker cannot use. The channel is left out
 * of the cycle (its rows wait) while every other channel carries on.
 */
export class InvalidChannelConfigError extends NotificationsRetryError {
  readonly code = 'invalid_channel_config';

  constructor(
    readonly channel: string,
    readonly column: string,
    readonly value: unknown,
    readonly requirement: string,
  ) {
    super(
      `notification_channels row "${channel}": ${column} ${requirement}; got ${describeValue(value)}`,
    );
  }
}
