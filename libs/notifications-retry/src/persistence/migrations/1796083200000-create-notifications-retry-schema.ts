import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The four tables of the data contract. Explicit SQL, so that what runs in
 * production is what was reviewed.
 */
export class CreateNotificationsRetrySchema1796083200000 implements MigrationInterface {
  readonly name = 'CreateNotificationsRetrySchema1796083200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notifications (
        id                  uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id           uuid        NULL,
        channel             text        NOT NULL,
        recipient_address   text        NOT NULL,
        subject             text        NULL,
        body                text        NOT NULL,
        status              text        NOT NULL,
        attempts            integer     NOT NULL DEFAULT 0,
        next_attempt_at     timestamptz NULL,
        scheduled_at        timestamptz NULL,
        provider_message_id text        NULL,
        last_error_code     text        NULL,
        last_error_message  text        NULL,
        sent_at             timestamptz NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        -- Set while a worker holds the row for a provider call; its outcome write must match it.
        claim_token         uuid        NULL,
        -- When that claim lapses (database clock): the row is due again then, whoever held it.
        claim_expires_at    timestamptz NULL,
        -- A claimed row leaves the due range until its claim lapses (greatest() ignores NULL), so
        -- the claim needs no condition of its own on the claim columns and stays one range scan.
        due_at              timestamptz GENERATED ALWAYS AS (
                              CASE WHEN status = 'Failed' AND next_attempt_at IS NOT NULL
                                     THEN greatest(next_attempt_at, claim_expires_at)
                                   WHEN status = 'Pending' AND scheduled_at IS NOT NULL
                                     THEN greatest(scheduled_at, claim_expires_at) END
                            ) STORED,
        CONSTRAINT notifications_status_check CHECK (status IN ('Pending', 'Sent', 'Failed')),
        CONSTRAINT notifications_attempts_check CHECK (attempts >= 0),
        -- '-infinity' (an operator's "retry now") would be due at once, and pg hands it to
        -- JavaScript as a number, not a Date: one such row would break every cycle's ordering.
        -- 'infinity' is never due and harmless; NULL passes.
        CONSTRAINT notifications_next_attempt_at_finite CHECK (next_attempt_at > '-infinity'),
        CONSTRAINT notifications_scheduled_at_finite CHECK (scheduled_at > '-infinity')
      )`);
    // The claim walks this index per enabled channel, oldest due first: rows of a
    // disabled channel sit under another key prefix and are never visited. Sent
    // and terminal rows have due_at null and are not in the index at all, so it
    // stays as small as the backlog.
    await queryRunner.query(`
      CREATE INDEX notifications_due_idx
        ON notifications (channel, due_at)
        WHERE due_at IS NOT NULL`);
    // The backlog gauge counts Failed rows awaiting a retry every cycle; this keeps that an
    // index-only count of the backlog itself, not a scan of a table that is mostly Sent.
    await queryRunner.query(`
      CREATE INDEX notifications_failed_backlog_idx
        ON notifications (channel)
        WHERE status = 'Failed' AND next_attempt_at IS NOT NULL`);
    // Every processed row moves out of (or along) the partial index, leaving dead
    // entries exactly where the claim starts reading. Default autovacuum waits for
    // 20 % of the table to change; on a large table that is hours of a slow head.
    await queryRunner.query(`
      ALTER TABLE notifications SET (
        autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_threshold = 500,
        autovacuum_analyze_scale_factor = 0.02,
        autovacuum_vacuum_cost_delay = 1
      )`);

    await queryRunner.query(`
      CREATE TABLE notification_channels (
        key                text        PRIMARY KEY,
        is_enabled         boolean     NOT NULL DEFAULT true,
        provider_key       text        NULL,
        max_attempts       integer     NULL,
        backoff_kind       text        NULL,
        backoff_base_ms    integer     NULL,
        backoff_max_ms     integer     NULL,
        backoff_multiplier double precision NULL,
        -- On by default, so that rows failed by one outage do not all retry in the same second.
        backoff_jitter     boolean     NOT NULL DEFAULT true,
        timeout_ms         integer     NULL,
        rate_limit_per_sec double precision NULL,
        max_concurrency    integer     NULL,
        created_at         timestamptz NOT NULL DEFAULT now(),
        updated_at         timestamptz NOT NULL DEFAULT now()
      )`);

    await queryRunner.query(`
      CREATE TABLE notification_outbox (
        id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        topic            text        NOT NULL,
        message_key      text        NOT NULL,
        contract_version integer     NOT NULL,
        payload          jsonb       NOT NULL,
        headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,
        created_at       timestamptz NOT NULL DEFAULT now(),
        published_at     timestamptz NULL
      )`);
    // What the relay polls: unpublished events in order.
    await queryRunner.query(`
      CREATE INDEX notification_outbox_unpublished_idx
        ON notification_outbox (created_at)
        WHERE published_at IS NULL`);
    await queryRunner.query(`
      CREATE INDEX notification_outbox_message_key_idx ON notification_outbox (message_key)`);

    await queryRunner.query(`
      CREATE TABLE distributed_locks (
        key           text        PRIMARY KEY,
        owner         text        NOT NULL,
        fencing_token bigint      NOT NULL,
        acquired_at   timestamptz NOT NULL,
        expires_at    timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE distributed_locks`);
    await queryRunner.query(`DROP TABLE notification_outbox`);
    await queryRunner.query(`DROP TABLE notification_channels`);
    await queryRunner.query(`DROP TABLE notifications`);
  }
}
