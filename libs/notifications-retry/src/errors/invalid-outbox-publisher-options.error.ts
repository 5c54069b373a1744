import { NotificationsRetryError } from './notifications-retry.error';

/**
 * A built-in outbox publisher's configuration is wrong: thrown when it is
 * constructed, or at start when the broker contradicts it (no stream captures
 * the subjects). `value` is already safe to show (a URL's password masked).
 */
export class InvalidOutboxPublisherOptionsError extends NotificationsRetryError {
  readonly code = 'invalid_outbox_publisher_options';

  constructor(
    readonly publisher: string,
    readonly option: string,
    readonly value: string,
    readonly requirement: string,
  ) {
    super(`${publisher} option "${option}" ${requirement}; got ${value}`);
  }
}
