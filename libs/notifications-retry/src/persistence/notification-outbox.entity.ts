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

  /** Set by the relay that drains the outbox, not by this worker. */
  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;
}
