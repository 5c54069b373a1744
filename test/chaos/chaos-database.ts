import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  notificationsRetryEntities,
  notificationsRetryMigrations,
} from '../../libs/notifications-retry/src';
import { LATE_SUCCESS_STATEMENT_TAG } from '../../libs/notifications-retry/src/persistence/sql/late-success-tag';
import { personalValues, type PersonalValues } from '../support/personal-data';
import { CHAOS_CHANNELS, CHAOS_LOCK_KEY } from './chaos-config';
import { seededUuid, uniform } from './fault-plan';

/** Applies the library's migrations, as the host does at start. */
export async function migrate(url: string): Promise<void> {
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities: notificationsRetryEntities,
    migrations: notificationsRetryMigrations,
    migrationsRun: true,
    synchronize: false,
    logging: false,
  });
  await dataSource.initialize();
  await dataSource.destroy();
}

/**
 * Test-only tables next to the library's: the provider-call ledger, an audit
 * of every change to `notifications` but claim stamps and releases (with the writer's session and the lease
 * row as that session saw it), of every change to the lease row, and of every
 * outbox insert with its transaction id.
 */
export async function installChaosSchema(client: Client): Promise<void> {
  await client.query(`
    CREATE TABLE chaos_ledger (
      id                  bigserial   PRIMARY KEY,
      -- The call's 'started' event; null on that event itself.
      call_id             bigint      NULL,
      notification_id     uuid        NOT NULL,
      call_no             int         NOT NULL,
      instance            text        NOT NULL,
      os_pid              int         NOT NULL,
      event               text        NOT NULL,
      -- What the adapter was told to do (fault-plan.ts), or 'deduplicated'.
      fault               text        NULL,
      attempts            int         NULL,
      provider_message_id text        NULL,
      deduplicated        boolean     NOT NULL DEFAULT false,
      at                  timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX chaos_ledger_notification_idx ON chaos_ledger (notification_id);
    CREATE INDEX chaos_ledger_call_idx ON chaos_ledger (call_id);

    CREATE TABLE chaos_audit (
      id                  bigserial   PRIMARY KEY,
      op                  text        NOT NULL,
      notification_id     uuid        NOT NULL,
      old_status          text        NULL,
      new_status          text        NULL,
      old_attempts        int         NULL,
      new_attempts        int         NULL,
      old_next_attempt_at timestamptz NULL,
      new_next_attempt_at timestamptz NULL,
      old_scheduled_at    timestamptz NULL,
      new_scheduled_at    timestamptz NULL,
      new_error_code      text        NULL,
      app_name            text        NOT NULL,
      backend_pid         int         NOT NULL,
      txid                bigint      NOT NULL,
      lock_owner          text        NULL,
      lock_token          bigint      NULL,
      lock_expires_at     timestamptz NULL,
      xact_at             timestamptz NOT NULL,
      at                  timestamptz NOT NULL,
      -- Written by the late-success statement: Sent for a call answered after its write-off, the
      -- one row write that neither a lease nor a claim token fences.
      late_success        boolean     NOT NULL DEFAULT false
    );
    CREATE INDEX chaos_audit_notification_idx ON chaos_audit (notification_id);

    CREATE FUNCTION chaos_audit_notifications() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      lease record;
      row_id uuid := COALESCE(NEW.id, OLD.id);
    BEGIN
      -- A claim's stamp or release changes only the claim columns: not a row write of the data
      -- contract (status, attempts, times, codes), and not what the invariants judge.
      IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) - 'claim_token' - 'claim_expires_at' - 'due_at')
                            = (to_jsonb(NEW) - 'claim_token' - 'claim_expires_at' - 'due_at') THEN
        RETURN NULL;
      END IF;
      SELECT owner, fencing_token, expires_at INTO lease
        FROM distributed_locks WHERE key = '${CHAOS_LOCK_KEY}';
      INSERT INTO chaos_audit (op, notification_id, old_status, new_status, old_attempts,
          new_attempts, old_next_attempt_at, new_next_attempt_at, old_scheduled_at,
          new_scheduled_at, new_error_code, app_name, backend_pid, txid, lock_owner, lock_token,
          lock_expires_at, xact_at, at, late_success)
        VALUES (TG_OP, row_id, OLD.status, NEW.status, OLD.attempts, NEW.attempts,
          OLD.next_attempt_at, NEW.next_attempt_at, OLD.scheduled_at, NEW.scheduled_at,
          NEW.last_error_code, current_setting('application_name'), pg_backend_pid(), txid_current(),
          lease.owner, lease.fencing_token, lease.expires_at, now(), clock_timestamp(),
          coalesce(position('${LATE_SUCCESS_STATEMENT_TAG}' in current_query()) > 0, false));
      RETURN NULL;
    END $$;
    CREATE TRIGGER chaos_audit_notifications AFTER UPDATE OR DELETE ON notifications
      FOR EACH ROW EXECUTE FUNCTION chaos_audit_notifications();

    CREATE TABLE chaos_lock_audit (
      id                bigserial   PRIMARY KEY,
      op                text        NOT NULL,
      old_owner         text        NULL,
      new_owner         text        NULL,
      old_token         bigint      NULL,
      new_token         bigint      NULL,
      old_expires_at    timestamptz NULL,
      new_acquired_at   timestamptz NULL,
      new_expires_at    timestamptz NULL,
      app_name          text        NOT NULL,
      at                timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE FUNCTION chaos_audit_lock() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO chaos_lock_audit (op, old_owner, new_owner, old_token, new_token, old_expires_at,
          new_acquired_at, new_expires_at, app_name)
        VALUES (TG_OP, OLD.owner, NEW.owner, OLD.fencing_token, NEW.fencing_token, OLD.expires_at,
          NEW.acquired_at, NEW.expires_at, current_setting('application_name'));
      RETURN NULL;
    END $$;
    CREATE TRIGGER chaos_audit_lock AFTER INSERT OR UPDATE OR DELETE ON distributed_locks
      FOR EACH ROW EXECUTE FUNCTION chaos_audit_lock();

    CREATE TABLE chaos_outbox_audit (
      event_id    uuid   NOT NULL,
      message_key text   NOT NULL,
      txid        bigint NOT NULL,
      app_name    text   NOT NULL
    );
    CREATE FUNCTION chaos_audit_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO chaos_outbox_audit (event_id, message_key, txid, app_name)
        VALUES (NEW.id, NEW.message_key, txid_current(), current_setting('application_name'));
      RETURN NULL;
    END $$;
    CREATE TRIGGER chaos_audit_outbox AFTER INSERT ON notification_outbox
      FOR EACH ROW EXECUTE FUNCTION chaos_audit_outbox();
  `);
}

export async function insertChaosChannels(client: Client): Promise<void> {
  for (const c of CHAOS_CHANNELS) {
    await client.query(
      `INSERT INTO notification_channels
         (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms,
          backoff_max_ms, backoff_multiplier, timeout_ms, rate_limit_per_sec, max_concurrency)
       VALUES ($1, true, $2, $3, $4, $5, $6, 2, $7, $8, $9)`,
      [
        c.key,
        c.providerKey,
        c.maxAttempts,
        c.backoffKind,
        c.backoffBaseMs,
        c.backoffMaxMs,
        c.timeoutMs,
        c.rateLimitPerSec,
        c.maxConcurrency,
      ],
    );
  }
}

export interface SeededRow extends PersonalValues {
  readonly id: string;
  readonly channel: string;
}

const SEED_CHUNK = 1_000;

/**
 * `rows` due notifications spread over the channels: about 60 % Failed after
 * one or two attempts with next_attempt_at in the past, the rest Pending with
 * a scheduled_at from a minute ago up to `spreadMs` ahead (they fall due while
 * the run goes on). Each has its own address (e-mail, phone or push token by
 * channel), subject and body (with quotes and a line break, which JSON escaping
 * changes), all carrying `marker`, so the security scan can find any of them.
 */
export async function seedNotifications(
  client: Client,
  options: { rows: number; seed: number; marker: string; spreadMs: number },
): Promise<SeededRow[]> {
  const seeded: SeededRow[] = [];
  const now = Date.now();
  for (let start = 0; start < options.rows; start += SEED_CHUNK) {
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (let n = start; n < Math.min(options.rows, start + SEED_CHUNK); n++) {
      const channel = CHAOS_CHANNELS[n % CHAOS_CHANNELS.length];
      const id = seededUuid(options.seed, n);
      const personal = personalValues(options.marker, n, channel.addressKind, {
        escapableBody: true,
      });
      const failed = uniform(options.seed, 'status', n) < 0.6;
      const attempts = failed ? 1 + (n % 2) : 0;
      const dueAt = new Date(
        now - 60_000 + Math.floor(uniform(options.seed, 'due', n) * (60_000 + options.spreadMs)),
      );
      const p = values.length;
      tuples.push(
        `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8}, $${p + 9})`,
      );
      values.push(
        id,
        channel.key,
        personal.recipientAddress,
        personal.subject,
        personal.body,
        failed ? 'Failed' : 'Pending',
        attempts,
        failed ? dueAt : null,
        failed ? null : dueAt,
      );
      seeded.push({ id, channel: channel.key, ...personal });
    }
    await client.query(
      `INSERT INTO notifications
         (id, channel, recipient_address, subject, body, status, attempts, next_attempt_at,
          scheduled_at)
       VALUES ${tuples.join(', ')}`,
      values,
    );
  }
  return seeded;
}
