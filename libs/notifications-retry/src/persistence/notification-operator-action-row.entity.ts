import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `notification_operator_action_rows`: what an operator action (a discard) changed on each row, as the row was before. */
@Entity({ name: 'notification_operator_action_rows' })
export class NotificationOperatorActionRowEntity {
  @PrimaryColumn({ name: 'action_id', type: 'uuid' })
  actionId!: string;

  @PrimaryColumn({ name: 'notification_id', type: 'uuid' })
  notificationId!: string;

  @Column({ name: 'previous_status', type: 'text' })
  previousStatus!: string;

  @Column({ name: 'previous_attempts', type: 'integer' })
  previousAttempts!: number;

  @Column({ name: 'previous_next_attempt_at', type: 'timestamptz', nullable: true })
  previousNextAttemptAt!: Date | null;

  @Column({ name: 'previous_scheduled_at', type: 'timestamptz', nullable: true })
  previousScheduledAt!: Date | null;

  @Column({ name: 'previous_error_code', type: 'text', nullable: true })
  previousErrorCode!: string | null;

  @Column({ name: 'previous_error_message', type: 'text', nullable: true })
  previousErrorMessage!: string | null;
}
