import { InvalidOperationInputError, OperationRefusedError } from '@pin/notifications-retry';
import { OpsArgumentError } from '@pin/notifications-retry/ops-cli';
import {
  AdminForbiddenError,
  AdminNotFoundError,
  AdminUnauthorizedError,
} from './admin-request-errors';
import { SignInLimitedError } from './sign-in-limited.error';

/** HTTP status of an error the admin page or API answers with; null: not ours, a 500. */
export function adminErrorStatus(error: unknown): number | null {
  if (error instanceof AdminUnauthorizedError) return 401;
  if (error instanceof AdminForbiddenError) return 403;
  if (error instanceof AdminNotFoundError) return 404;
  if (error instanceof InvalidOperationInputError || error instanceof OpsArgumentError) return 400;
  if (error instanceof OperationRefusedError) return 409;
  if (error instanceof SignInLimitedError) return 429;
  return null;
}
