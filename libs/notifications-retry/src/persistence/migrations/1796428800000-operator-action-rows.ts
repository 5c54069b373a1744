import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `notification_operator_action_rows`: what an operator action other than a
 * redrive changed on each row (a discard first), so that the row's former
 * state stays known and the action can be undone by hand.
 *
 * Not `notification_redriven_rows`: that table means "reset by a redrive" (a
 * runbook and the console read it so), and it keeps only the attempts and the
 * error. A discard also ends a Pending or a scheduled Failed row, so the row's
 * status and its next_attempt_at / scheduled_at must be kept too.
 */
export class OperatorActionRows1796428800000 implements MigrationInterface {
  readonly name = 'OperatorActionRows1796428800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS notification_operator_action_rows (
        action_id                uuid        NOT NULL REFERENCES notification_operator_actions (id),
        notification_id          uuid        NOT NULL,
        previous_status          text        NOT NULL,
        previous_attempts        integer     NOT NULL,
        previous_next_attempt_at timestamptz NULL,
        previous_scheduled_at    timestamptz NULL,
        previous_error_code      text        NULL,
        previous_error_message   text        NULL,
        PRIMARY KEY (action_id, notification_id)
      )`);
    // "What happened to this notification": looked up by notification, not by action.
    await queryRunner.query(`
      CREATE INDEX IF NOT EXISTS notification_operator_action_rows_notification_idx
        ON notification_operator_action_rows (notification_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS notification_operator_action_rows`);
  }
}
