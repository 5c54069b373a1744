import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `notification_operator_actions`: the audit of every state change an operator made (who, when, why, on what, how many rows). */
@Entity({ name: 'notification_operator_actions' })
export class NotificationOperatorActionEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  /** `redrive`, `channel-pause`, `channel-resume`, `lease-release`. */
  @Column({ type: 'text' })
  action!: string;

  @Column({ type: 'text' })
  actor!: string;

  @Column({ type: 'text' })
  reason!: string;

  /** The filter or target of the action, no personal data. */
  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  filter!: Record<string, unknown>;

  @Column({ type: 'integer', default: 0 })
  rows!: number;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
