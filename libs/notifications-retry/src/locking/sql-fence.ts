/**
 * A lease's fence stated as SQL, so the cycle can check it inside the very
 * statement that writes a row's outcome (one round trip per row fewer than
 * `DistributedLock.confirm()`).
 *
 * `sql` is a SELECT that returns at least one row while the lease is still the
 * caller's, and takes whatever row lock makes a takeover wait for the writing
 * transaction (the default lock uses `FOR SHARE` on the lease row). Its
 * placeholders are `$1`…`$n`, bound to `params`. The text must not depend on the
 * lease: values go in `params` only, both because they must never be spliced
 * into SQL and because the text becomes a named prepared statement, one per
 * distinct text for the life of the process.
 */
export interface SqlFence {
  readonly sql: string;
  readonly params: readonly unknown[];
}
