import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `notification_redriven_rows`: what a redrive reset on each row, so the old attempts and error stay known. */
@Entity({ name: 'notification_redriven_rows' })
export class NotificationRedrivenRowEntity {
  @PrimaryColumn({ name: 'action_id', type: 'uuid' })
  actionId!: string;

  @PrimaryColumn({ name: 'notification_id', type: 'uuid' })
  notificationId!: string;

  @Column({ name: 'previous_attempts', type: 'integer' })
  previousAttempts!: number;

  @Column({ name: 'previous_error_code', type: 'text', nullable: true })
  previousErrorCode!: string | null;

  @Column({ name: 'previous_error_message', type: 'text', nullable: true })
  previousErrorMessage!: string | null;
}
