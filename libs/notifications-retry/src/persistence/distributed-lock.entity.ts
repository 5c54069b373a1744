import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `distributed_locks`: leases judged by the database clock. */
@Entity({ name: 'distributed_locks' })
export class DistributedLockEntity {
  @PrimaryColumn({ type: 'text' })
  key!: string;

  @Column({ type: 'text' })
  owner!: string;

  /** Increments on every new owner; bigint, so the driver hands it over as a string. */
  @Column({ name: 'fencing_token', type: 'bigint' })
  fencingToken!: string;

  @Column({ name: 'acquired_at', type: 'timestamptz' })
  acquiredAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  /** When the last cycle under this lease completed, by the database clock (null: none yet). */
  @Column({ name: 'last_completed_at', type: 'timestamptz', nullable: true })
  lastCompletedAt!: Date | null;

  /** The instance (owner) whose cycle that was. */
  @Column({ name: 'last_completed_by', type: 'text', nullable: true })
  lastCompletedBy!: string | null;
}
