import type { NotificationStatus } from '../vocabulary/notification-status';
import type { OutgoingNotification } from '../providers/provider-adapter';

/**
 * A row this worker holds for one provider call: what its adapter is sent,
 * the columns its outcome depends on, read with plain SQL by the claim (no
 * entity is hydrated on the hot path), and the claim it holds them under.
 */
export interface ClaimedRow extends OutgoingNotification {
  readonly status: NotificationStatus;
  readonly nextAttemptAt: Date | null;
  readonly scheduledAt: Date | null;
  /** When the row was due, before the claim moved its `due_at`. */
  readonly dueAt: Date;
  /** The outcome write must match it. */
  readonly claimToken: string;
  /** It carried an earlier claim that lapsed (a worker died or stalled holding it). */
  readonly lapsed: boolean;
  /**
   * `performance.now()` at which the claim lapses, as this process sees it (a
   * little before the database does: measured from before the claim was sent).
   */
  readonly claimedUntil: number;
}
