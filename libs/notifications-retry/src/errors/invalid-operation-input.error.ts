import { NotificationsRetryError } from './notifications-retry.error';

/**
 * An operator's request that cannot mean anything: a bad filter value, a
 * missing reason, a redrive of everything without saying so. Nothing was
 * changed. `option` names what was wrong, for a CLI or API to point at.
 */
export class InvalidOperationInputError extends NotificationsRetryError {
  readonly code = 'invalid_operation_input';

  constructor(
    readonly option: string,
    readonly problem: string,
  ) {
    super(`${option} ${problem}`);
  }
}
