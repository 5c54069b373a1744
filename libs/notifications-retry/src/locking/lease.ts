/** Proof of holding a distributed lock; the fencing token grows with every new owner. */
export interface Lease {
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
}
