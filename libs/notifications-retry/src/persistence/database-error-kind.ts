/**
 * What a failed statement says about its connection and about trying again
 * (DESIGN §3.5). Read from the SQLSTATE PostgreSQL sent, or from the socket
 * error `pg` raised when no reply came.
 */

/** `pg`'s own errors when the socket ended or broke before or during a reply. */
const SOCKET_ERROR_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ENOTCONN',
]);
const SOCKET_ENDED =
  /^Connection terminated|connection (is )?(closed|ended)|Client has encountered a connection error/i;

/**
 * SQLSTATEs after which the same statement may well succeed: a lock or
 * statement timeout (a DBA's `lock_timeout` / `statement_timeout` behind a
 * migration's lock), a serialization failure or deadlock, too many
 * connections for a moment.
 */
const PASSING_SQLSTATES = new Set(['55P03', '57014', '40001', '40P01', '53300']);

/** The SQLSTATE (or `pg`'s socket error code) an error carries, if any: safe to log. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The connection is gone: the server ended the session (class 57P: admin or
 * crash shutdown, a terminated backend), the connection failed (class 08), or
 * the socket ended. Such a client must be destroyed, never pooled again.
 */
export function isConnectionLost(error: unknown): boolean {
  // A host name with several addresses fails as one AggregateError of the connect errors.
  const errors = (error as { errors?: unknown } | null)?.errors;
  if (Array.isArray(errors) && errors.some(isConnectionLost)) return true;
  const code = sqlState(error);
  if (code !== undefined) {
    if (code.startsWith('57P') || code.startsWith('08')) return true;
    if (SOCKET_ERROR_CODES.has(code)) return true;
  }
  // Not `instanceof Error`: an error from another realm (a VM context, a test sandbox) is one too.
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && SOCKET_ENDED.test(message);
}

/** Worth sending again a moment later: the cause passes (and nothing was committed). */
export function isPassingDatabaseError(error: unknown): boolean {
  if (isConnectionLost(error)) return true;
  const code = sqlState(error);
  return code !== undefined && PASSING_SQLSTATES.has(code);
}
