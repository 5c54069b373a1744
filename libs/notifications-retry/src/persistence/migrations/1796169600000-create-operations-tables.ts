import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator tools' tables: channel pauses, the audit of operator actions and
 * what each redrive reset. New, empty tables only: nothing here touches
 * `notifications`, so it is instant whatever that table's size.
 */
export class CreateOperationsTables1796169600000 implements MigrationInterface {
  readonly name = 'CreateOperationsTables1796169600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_channel_pauses (
        channel   text        PRIMARY KEY,
        reason    text        NOT NULL,
        paused_by text        NOT NULL,
        paused_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE notification_operator_actions (
        id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        action     text        NOT NULL,
        actor      text        NOT NULL,
        reason     text        NOT NULL,
        filter     jsonb       NOT NULL DEFAULT '{}'::jsonb,
        rows       integer     NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE INDEX notification_operator_actions_created_at_idx
        ON notification_operator_actions (created_at)`);
    await queryRunner.query(`
      CREATE TABLE notification_redriven_rows (
        action_id              uuid    NOT NULL REFERENCES notification_operator_actions (id),
        notification_id        uuid    NOT NULL,
        previous_attempts      integer NOT NULL,
        previous_error_code    text    NULL,
        previous_error_message text    NULL,
        PRIMARY KEY (action_id, notification_id)
      )`);
    // "What happened to this notification": looked up by notification, not by action.
    await queryRunner.query(`
      CREATE INDEX notification_redriven_rows_notification_idx
        ON notification_redriven_rows (notification_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE notification_redriven_rows`);
    await queryRunner.query(`DROP TABLE notification_operator_actions`);
    await queryRunner.query(`DROP TABLE notification_channel_pauses`);
  }
}
