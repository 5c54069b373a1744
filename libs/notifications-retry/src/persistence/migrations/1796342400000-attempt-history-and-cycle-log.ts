import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the operator console shows (DESIGN §2, §8):
 *
 * - `notifications.attempt_history`: the row's last attempts, newest last,
 *   bounded (`ATTEMPT_HISTORY_LIMIT`), written by the same statement as each
 *   outcome: no extra round trip, no second table to keep in step.
 * - `notification_retry_cycles`: one row per completed cycle, written by the
 *   cycle's owner at its end, kept for a bounded time (the cycle log's
 *   retention).
 *
 * Safe on a large table: a constant default is added without a rewrite (a
 * brief ACCESS EXCLUSIVE lock, bounded by the runner's lock_timeout).
 */
export class AttemptHistoryAndCycleLog1796342400000 implements MigrationInterface {
  readonly name = 'AttemptHistoryAndCycleLog1796342400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications
        ADD COLUMN IF NOT EXISTS attempt_history jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS notification_retry_cycles (
        run_id          uuid        PRIMARY KEY,
        correlation_id  text        NOT NULL,
        instance_id     text        NOT NULL,
        fencing_token   bigint      NOT NULL,
        started_at      timestamptz NOT NULL,
        finished_at     timestamptz NOT NULL,
        duration_ms     integer     NOT NULL,
        stop_reason     text        NOT NULL,
        processed       integer     NOT NULL,
        sent            integer     NOT NULL,
        retried         integer     NOT NULL,
        terminal        integer     NOT NULL,
        deferred        integer     NOT NULL,
        skipped         integer     NOT NULL,
        claims_lost     integer     NOT NULL,
        errors          integer     NOT NULL
      )`);
    await queryRunner.query(`
      CREATE INDEX IF NOT EXISTS notification_retry_cycles_finished_at
        ON notification_retry_cycles (finished_at DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS notification_retry_cycles`);
    await queryRunner.query(`ALTER TABLE notifications DROP COLUMN IF EXISTS attempt_history`);
  }
}
