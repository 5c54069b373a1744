import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `notification_outbox`: written in the same statement (one atomic write) as the status change it reports. */
@Entity({ name: 'notification_outbox' })
export class NotificationOutboxEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text' })
  topic!: string;

  @Column({ name: 'message_key', type: 'text' })
  messageKey!: string;

  @Column({ name: 'contract_version', type: 'integer' })
  contractVersion!: number;

  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  headers!: Record<string, string>;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  /** Set by the relay once the broker acknowledged the event. */
  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  /** Relay claims so far. */
  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** After a retriable failure: not claimed again before this. */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  /** Set while a relay publishes the row; its outcome write must match it. */
  @Column({ name: 'claim_token', type: 'uuid', nullable: true })
  claimToken!: string | null;

  @Column({ name: 'claim_expires_at', type: 'timestamptz', nullable: true })
  claimExpiresAt!: Date | null;

  /** A permanent failure: left for an operator. */
  @Column({ name: 'parked_at', type: 'timestamptz', nullable: true })
  parkedAt!: Date | null;

  /** The publisher's reason for the last failure (never the payload). */
  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;
}
