import { MigrationLockTimeoutError } from '@pin/notifications-retry';

// The server is not reachable, or not accepting connections yet (a database starting with the app).
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// SQLSTATE: connection_exception (08xxx), admin/crash shutdown, cannot_connect_now, too_many_connections.
const RETRYABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
// pg's own errors for a connection that never came up or went away (they carry no code).
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Connection refused',
];

/**
 * `toRetry` of the host's TypeOrmModule: true only for an error that waiting can
 * fix, i.e. the database could not be reached. A failed migration, a migration
 * lock wait that timed out, bad credentials or a missing database fail the start
 * at once: retrying them would only repeat the same failure, each attempt after
 * another full lock wait.
 */
export function isRetryableDataSourceError(error: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (candidate: unknown): boolean => {
    if (typeof candidate !== 'object' || candidate === null || seen.has(candidate)) return false;
    seen.add(candidate);
    if (candidate instanceof MigrationLockTimeoutError) return false;
    const { code, message, cause, errors, driverError } = candidate as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
      driverError?: unknown;
    };
    if (typeof code === 'string') {
      if (NETWORK_ERROR_CODES.has(code) || RETRYABLE_SQLSTATES.has(code) || code.startsWith('08'))
        return true;
    }
    if (typeof message === 'string' && PG_CONNECTION_MESSAGES.some((m) => message.includes(m)))
      return true;
    // Node's AggregateError (one per address tried), TypeORM's QueryFailedError, an `Error.cause` chain.
    return (
      visit(cause) || visit(driverError) || (Array.isArray(errors) && errors.some((e) => visit(e)))
    );
  };
  return visit(error);
}
