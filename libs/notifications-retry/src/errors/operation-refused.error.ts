import { NotificationsRetryError } from './notifications-retry.error';

/**
 * A well-formed operator request that the current state does not allow: a
 * live lease of another owner, a stale fencing token, an unknown channel.
 * Nothing was changed.
 */
export class OperationRefusedError extends NotificationsRetryError {
  readonly code = 'operation_refused';

  constructor(
    readonly operation: string,
    readonly reason: string,
  ) {
    super(`${operation} refused: ${reason}`);
  }
}
