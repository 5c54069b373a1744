/** What one relay pass did: claimed a batch, published it, wrote the outcomes back. */
export interface OutboxRelayPass {
  readonly claimed: number;
  readonly published: number;
  /** Retriable failures, now backing off. */
  readonly retried: number;
  readonly parked: number;
  /** Cut by shutdown and released for another relay. */
  readonly released: number;
  /** Outcomes whose claim had lapsed and been taken by another relay: nothing written for them. */
  readonly claimsLost: number;
}
