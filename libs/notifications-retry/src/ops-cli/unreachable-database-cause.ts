import { isConnectionLost, sqlState } from '../persistence/database-error-kind';

/** No route to the server or no such host: the connection never started. */
const NOT_CONNECTED_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * The server answered and refused the session: no such role or database, a
 * wrong password, not accepting connections yet, no slot left. The URL's
 * target is wrong or not ready, as with a refused port: nothing was read.
 */
const SESSION_REFUSED_STATES = new Set(['28000', '28P01', '3D000', '57P03', '53300']);

/**
 * Why the database could not be reached, when that is what `error` says: the
 * driver's text and code (host and port, never the URL's user or password);
 * null for any other failure.
 */
export function unreachableDatabaseCause(error: unknown): string | null {
  const errors = (error as { errors?: unknown } | null)?.errors;
  // A host name with several addresses fails as one AggregateError, whose own message is empty.
  if (Array.isArray(errors) && errors.length > 0) {
    const causes = errors.map(unreachableDatabaseCause);
    return causes.every((cause) => cause !== null) ? [...new Set(causes)].join('; ') : null;
  }
  const code = sqlState(error);
  const notConnected =
    code !== undefined && (NOT_CONNECTED_CODES.has(code) || SESSION_REFUSED_STATES.has(code));
  if (!isConnectionLost(error) && !notConnected) {
    return null;
  }
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
}
