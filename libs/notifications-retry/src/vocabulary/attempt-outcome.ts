/**
 * The provider's HTTP status (100…599) of a failure whose adapter gave one
 * (`DeliveryError.httpStatus`); absent otherwise. Kept for the attempt history.
 */
interface HttpStatus {
  readonly httpStatus?: number;
}

/** What one delivery attempt came to, before it is turned into a row change. */
export type AttemptOutcome =
  | { readonly kind: 'sent'; readonly providerMessageId: string }
  | (HttpStatus & {
      readonly kind: 'retriable';
      readonly errorCode: string;
      readonly errorMessage: string;
      /**
       * No answer came within the timeout and the settle margin, and the call may
       * still be running: whether the provider delivered is not known.
       */
      readonly unsettled?: boolean;
    })
  | (HttpStatus & {
      readonly kind: 'non-retriable';
      readonly errorCode: string;
      readonly errorMessage: string;
    })
  /** The provider asked to slow down: the attempt does not count. */
  | (HttpStatus & {
      readonly kind: 'throttled';
      readonly retryAfterMs: number | null;
      readonly errorCode: string;
      readonly errorMessage: string;
    })
  /** The worker stopped the call (lost lease, open circuit): the attempt does not count. */
  | { readonly kind: 'interrupted'; readonly errorCode: string }
  /** The row already used up the channel's attempts (max lowered): no call was made. */
  | { readonly kind: 'exhausted' };
