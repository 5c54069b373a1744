/**
 * What became of one event of a batch. `error` is stored on the row and
 * logged: a broker's reason (a code, a status), never the payload.
 *
 * - `published`: the broker has it (acknowledged, or a duplicate it already had);
 * - `retriable`: try again after a backoff (broker down, timeout, no stream yet);
 * - `permanent`: it can never be published as it is (too large, refused); the
 *   row is parked for an operator and no longer blocks its key.
 */
export type OutboxPublishOutcome =
  | { readonly eventId: string; readonly status: 'published' }
  | { readonly eventId: string; readonly status: 'retriable'; readonly error: string }
  | { readonly eventId: string; readonly status: 'permanent'; readonly error: string };

export type OutboxPublishStatus = OutboxPublishOutcome['status'];
