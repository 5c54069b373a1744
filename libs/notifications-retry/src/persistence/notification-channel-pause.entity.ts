import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `notification_channel_pauses`: channels an operator took out of the claim, and why. */
@Entity({ name: 'notification_channel_pauses' })
export class NotificationChannelPauseEntity {
  @PrimaryColumn({ type: 'text' })
  channel!: string;

  @Column({ type: 'text' })
  reason!: string;

  @Column({ name: 'paused_by', type: 'text' })
  pausedBy!: string;

  @Column({ name: 'paused_at', type: 'timestamptz', default: () => 'now()' })
  pausedAt!: Date;
}
