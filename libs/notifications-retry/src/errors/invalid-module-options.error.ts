import { describeValue } from './describe-value';
import { NotificationsRetryError } from './notifications-retry.error';

/** Thrown at start when `NotificationsRetryModule` options are out of range. */
export class InvalidModuleOptionsError extends NotificationsRetryError {
  readonly code = 'invalid_module_options';

  constructor(
    readonly option: string,
    readonly value: unknown,
    readonly requirement: string,
  ) {
    super(
      `NotificationsRetryModule option "${option}" ${requirement}; got ${describeValue(value)}`,
    );
  }
}
