import type { LeaseLossCause } from './lease-loss';
import type { RowTransition } from './row-transition';

/** How one row's outcome write ended. */
export type OutcomeWriteResult =
  /** Outcome, cleared claim and event committed together. */
  | { readonly kind: 'written'; readonly settleMs: number }
  /** The row's claim token no longer matched: nothing written (the claim lapsed and was taken, or another writer cleared it). */
  | { readonly kind: 'claim-lost' }
  /** The outcome could not be written; the hold was (attempt counted, row held by backoff). */
  | { readonly kind: 'held'; readonly hold: RowTransition; readonly error: unknown }
  /** Neither could: the claim lapses and the row is due again then. */
  | { readonly kind: 'not-written'; readonly error: unknown }
  | { readonly kind: 'lease-lost'; readonly cause: LeaseLossCause };
