import type { Lease } from './lease';

/**
 * A lease's fence stated as SQL, so every statement that claims or settles
 * rows checks it itself, in the same atomic step (DESIGN §3.3, §3.5).
 *
 * `sql` is a SELECT that returns one row, with the lease's expiry by the
 * database clock as `expires_at` (timestamptz), while the lease is still the
 * caller's, and takes whatever row lock makes a takeover wait for the
 * statement (the default uses `FOR SHARE` on the lease row). The claim uses
 * `expires_at` to claim only what the lease outlives. Placeholders are `$1`…
 * `$n`, bound to `params(lease)`. The text is fixed for the life of the
 * process (it is compiled into prepared statements at start): values never go
 * into it.
 */
export interface LeaseFence {
  readonly sql: string;
  params(lease: Lease): readonly unknown[];
}
