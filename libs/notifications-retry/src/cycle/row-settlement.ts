import type { OutboxRow } from '../outbox/outbox-row';
import type { AttemptRecord } from './attempt-record';
import type { ClaimedRow } from './claimed-row';
import type { RowTransition } from './row-transition';

/**
 * What becomes of a claimed row once its call is over: an outcome to write
 * (with its outbox event when final, and the hold to write instead if the
 * outcome cannot be), or its claim handed back untouched (the call was cut:
 * shutdown, a lost lease, an opened circuit).
 */
export type RowSettlement = RowOutcome | { readonly kind: 'release'; readonly row: ClaimedRow };

export interface RowOutcome {
  readonly kind: 'outcome';
  readonly row: ClaimedRow;
  readonly transition: RowTransition;
  readonly event: OutboxRow | null;
  /**
   * Written when `transition` cannot be (see unrecordedOutcomeTransition): the
   * attempt counted and the row held by backoff, without an event. Null when
   * no provider was called (nothing to hold: the row simply stays due).
   */
  readonly hold: RowTransition | null;
  /**
   * The attempt, for its history entry: written with `transition`, or with
   * `hold` instead (then with the hold's error code and text).
   */
  readonly attempt: AttemptRecord;
  /** `performance.now()` when the outcome was known: the settle time starts here. */
  readonly decidedAt: number;
}
