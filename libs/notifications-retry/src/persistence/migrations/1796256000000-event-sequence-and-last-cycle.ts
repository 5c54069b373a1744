import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two facts the worker keeps in the database rather than in a process
 * (DESIGN §5, §7):
 *
 * - `notifications.event_sequence`: the number of the last outbox event
 *   written for the notification. Every event carries the next one, so a
 *   consumer keeps the latest by `sequence` even when a redrive or a late
 *   success follows a terminal Failed.
 * - `distributed_locks.last_completed_at` / `last_completed_by`: when, by the
 *   database clock, and by which instance the last cycle under this lease
 *   completed. Health on every instance reads it: a lease nobody can take, or
 *   an owner that never completes, turns health down everywhere.
 *
 * Safe on a large table: a constant default and nullable columns are added
 * without a rewrite (a brief ACCESS EXCLUSIVE lock, bounded by the runner's
 * lock_timeout).
 */
export class EventSequenceAndLastCycle1796256000000 implements MigrationInterface {
  readonly name = 'EventSequenceAndLastCycle1796256000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications
        ADD COLUMN IF NOT EXISTS event_sequence integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`
      ALTER TABLE distributed_locks
        ADD COLUMN IF NOT EXISTS last_completed_at timestamptz NULL,
        ADD COLUMN IF NOT EXISTS last_completed_by text        NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE distributed_locks
        DROP COLUMN IF EXISTS last_completed_by,
        DROP COLUMN IF EXISTS last_completed_at`);
    await queryRunner.query(`ALTER TABLE notifications DROP COLUMN IF EXISTS event_sequence`);
  }
}
