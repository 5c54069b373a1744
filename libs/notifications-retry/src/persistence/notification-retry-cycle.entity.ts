import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * `notification_retry_cycles`: one row per completed cycle, written by its
 * owner at the end (counts by outcome, why it stopped), kept for the cycle
 * log's retention; what the console's cycle page and chart read.
 */
@Entity({ name: 'notification_retry_cycles' })
export class NotificationRetryCycleEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ name: 'correlation_id', type: 'text' })
  correlationId!: string;

  /** The lease owner that ran it. */
  @Column({ name: 'instance_id', type: 'text' })
  instanceId!: string;

  /** bigint: the driver hands it over as a string. */
  @Column({ name: 'fencing_token', type: 'bigint' })
  fencingToken!: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt!: Date;

  @Column({ name: 'finished_at', type: 'timestamptz' })
  finishedAt!: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @Column({ name: 'stop_reason', type: 'text' })
  stopReason!: string;

  @Column({ type: 'integer' })
  processed!: number;

  @Column({ type: 'integer' })
  sent!: number;

  @Column({ type: 'integer' })
  retried!: number;

  @Column({ type: 'integer' })
  terminal!: number;

  @Column({ type: 'integer' })
  deferred!: number;

  @Column({ type: 'integer' })
  skipped!: number;

  @Column({ name: 'claims_lost', type: 'integer' })
  claimsLost!: number;

  @Column({ type: 'integer' })
  errors!: number;
}
