import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `next_attempt_at` and `scheduled_at` must be real instants. PostgreSQL
 * accepts '-infinity' and 'infinity' (an operator's "retry now" / "never"),
 * `pg` hands them to JavaScript as numbers, not dates, and one such row would
 * break every cycle's ordering by due time. Refused at the door instead.
 * Added NOT VALID and then validated, so the check of existing rows does not
 * hold an exclusive lock on the table while it scans.
 */
export class FiniteNotificationTimes1796169600000 implements MigrationInterface {
  readonly name = 'FiniteNotificationTimes1796169600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications
        ADD CONSTRAINT notifications_next_attempt_at_finite CHECK (isfinite(next_attempt_at)) NOT VALID,
        ADD CONSTRAINT notifications_scheduled_at_finite CHECK (isfinite(scheduled_at)) NOT VALID`);
    await queryRunner.query(
      `ALTER TABLE notifications VALIDATE CONSTRAINT notifications_next_attempt_at_finite`,
    );
    await queryRunner.query(
      `ALTER TABLE notifications VALIDATE CONSTRAINT notifications_scheduled_at_finite`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications
        DROP CONSTRAINT notifications_scheduled_at_finite,
        DROP CONSTRAINT notifications_next_attempt_at_finite`);
  }
}
