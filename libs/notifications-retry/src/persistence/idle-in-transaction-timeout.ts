/**
 * `SET LOCAL idle_in_transaction_session_timeout` for one transaction: the
 * server ends the session (and so frees its row locks) when the transaction
 * sits idle for longer. Set per transaction rather than as a connection
 * startup parameter, which PgBouncer refuses ("unsupported startup
 * parameter"), and LOCAL so that it ends with the transaction and never
 * reaches another client of a pooled server connection. SET takes no bind
 * parameters: the value is validated here and written into the text.
 */
export function setIdleInTransactionTimeoutSql(timeoutMs: number): string {
  // The setting is an int of milliseconds; 0 would switch the server's bound off.
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
    throw new RangeError(
      `idle_in_transaction_session_timeout must be an integer from 1 to 2147483647 ms, got ${timeoutMs}`,
    );
  }
  return `SET LOCAL idle_in_transaction_session_timeout = ${timeoutMs}`;
}
