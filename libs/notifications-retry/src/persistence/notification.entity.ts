import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { NotificationStatus } from '../notifications/notification-status';

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

  /**
   * Stored generated column (see the migration): Failed → next_attempt_at,
   * Pending → scheduled_at, else null. The claim's index key.
   */
  @Column({
    name: 'due_at',
    type: 'timestamptz',
    nullable: true,
    insert: false,
    update: false,
    generatedType: 'STORED',
    asExpression: `CASE status WHEN 'Failed' THEN next_attempt_at WHEN 'Pending' THEN scheduled_at END`,
  })
  readonly dueAt!: Date | null;
}
