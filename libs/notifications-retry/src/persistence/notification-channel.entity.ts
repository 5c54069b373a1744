import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `notification_channels`: the channel catalog the default `ChannelCatalog` reads. */
@Entity({ name: 'notification_channels' })
export class NotificationChannelEntity {
  @PrimaryColumn({ type: 'text' })
  key!: string;

  @Column({ name: 'is_enabled', type: 'boolean', default: true })
  isEnabled!: boolean;

  @Column({ name: 'provider_key', type: 'text', nullable: true })
  providerKey!: string | null;

  @Column({ name: 'max_attempts', type: 'integer', nullable: true })
  maxAttempts!: number | null;

  @Column({ name: 'backoff_kind', type: 'text', nullable: true })
  backoffKind!: string | null;

  @Column({ name: 'backoff_base_ms', type: 'integer', nullable: true })
  backoffBaseMs!: number | null;

  @Column({ name: 'backoff_max_ms', type: 'integer', nullable: true })
  backoffMaxMs!: number | null;

  @Column({ name: 'backoff_multiplier', type: 'double precision', nullable: true })
  backoffMultiplier!: number | null;

  @Column({ name: 'backoff_jitter', type: 'boolean', default: true })
  backoffJitter!: boolean;

  @Column({ name: 'timeout_ms', type: 'integer', nullable: true })
  timeoutMs!: number | null;

  @Column({ name: 'rate_limit_per_sec', type: 'double precision', nullable: true })
  rateLimitPerSec!: number | null;

  @Column({ name: 'max_concurrency', type: 'integer', nullable: true })
  maxConcurrency!: number | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
