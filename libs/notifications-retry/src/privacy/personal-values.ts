/** The personal values of one notification, searched for in what a provider sends back. */
export interface PersonalValues {
  readonly recipientAddress?: string | null;
  readonly subject?: string | null;
  readonly body?: string | null;
  /**
   * The notification's own id, which is not personal: a body may hold it (a
   * tracking link) and providers echo it (it is the idempotency key, often part
   * of their message id). Where it occurs whole, it is kept.
   */
  readonly id?: string | null;
}
