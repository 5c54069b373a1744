import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { NotificationStatus } from '../vocabulary/notification-status';

/**
 * `notifications`: written by the dispatcher, advanced by this worker. Column
 * names are a contract with other modules of the monolith.
 */
@Entity({ name: 'notifications' })
export class NotificationEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'tenant_id', type: 'uuid', nullable: true })
  tenantId!: string | null;

  @Column({ type: 'text' })
  channel!: string;

  /** Personal data: never log it. */
  @Column({ name: 'recipient_address', type: 'text' })
  recipientAddress!: string;

  /** Personal data: never log it. */
  @Column({ type: 'text', nullable: true })
  subject!: string | null;

  /** Personal data: never log it. */
  @Column({ type: 'text' })
  body!: string;

  @Column({ type: 'text' })
  status!: NotificationStatus;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** Null on a Failed row means terminal. */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'scheduled_at', type: 'timestamptz', nullable: true })
  scheduledAt!: Date | null;

  @Column({ name: 'provider_message_id', type: 'text', nullable: true })
  providerMessageId!: string | null;

  @Column({ name: 'last_error_code', type: 'text', nullable: true })
  lastErrorCode!: string | null;

  @Column({ name: 'last_error_message', type: 'text', nullable: true })
  lastErrorMessage!: string | null;

  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  /** Set while a worker holds the row for a provider call; the outcome write must match it. */
  @Column({ name: 'claim_token', type: 'uuid', nullable: true })
  claimToken!: string | null;

  /**
   * The number of the last outbox event written for this notification: every
   * event carries the next, so a consumer keeps the latest by sequence.
   */
  @Column({ name: 'event_sequence', type: 'integer', default: 0 })
  eventSequence!: number;

  /** When that claim lapses, by the database clock. */
  @Column({ name: 'claim_expires_at', type: 'timestamptz', nullable: true })
  claimExpiresAt!: Date | null;

  /**
   * The row's last attempts, newest last, at most `ATTEMPT_HISTORY_LIMIT`
   * (see `AttemptHistoryEntry`): written by the statement that writes each
   * outcome, redacted like `last_error_message`.
   */
  @Column({ name: 'attempt_history', type: 'jsonb', default: () => "'[]'::jsonb" })
  attemptHistory!: unknown[];

  /**
   * Stored generated column (see the migration): Failed with next_attempt_at →
   * greatest(next_attempt_at, claim_expires_at), Pending with scheduled_at →
   * greatest(scheduled_at, claim_expires_at), else null. The claim's index key.
   */
  @Column({
    name: 'due_at',
    type: 'timestamptz',
    nullable: true,
    insert: false,
    update: false,
    generatedType: 'STORED',
    asExpression: `CASE WHEN status = 'Failed' AND next_attempt_at IS NOT NULL THEN greatest(next_attempt_at, claim_expires_at) WHEN status = 'Pending' AND scheduled_at IS NOT NULL THEN greatest(scheduled_at, claim_expires_at) END`,
  })
  readonly dueAt!: Date | null;
}
