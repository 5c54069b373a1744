import type { MigrationInterface, QueryRunner } from 'typeorm';

/** How long the ADD CONSTRAINT may queue for its brief ACCESS EXCLUSIVE lock on notifications. */
const ADD_CONSTRAINT_LOCK_TIMEOUT = '5s';

/**
 * Refuses `'-infinity'` in `notifications.next_attempt_at` and `scheduled_at`
 * (constraints `notifications_next_attempt_at_finite` and
 * `notifications_scheduled_at_finite`; NULL still passes). A `'-infinity'` due
 * time is always due, and `pg` returns it to JavaScript as a number, not a
 * Date, which breaks every cycle that claims it. `'infinity'` is never due, so
 * the worker never reads it: it stays allowed (an operator's "never").
 *
 * Steps:
 * 1. `SET LOCAL lock_timeout`, then ADD both constraints NOT VALID: the only
 *    step that takes ACCESS EXCLUSIVE, for no scan. Behind a long transaction
 *    on the table it fails after ADD_CONSTRAINT_LOCK_TIMEOUT with a clear error
 *    instead of queueing there and blocking every query behind it.
 *    From here on, no new `'-infinity'` can be written.
 * 2. Sets existing `'-infinity'` values to `now()`: what an operator meant by
 *    it ("retry now"). Row locks only. Done after step 1 so that no row written
 *    in between can make step 3 fail.
 * 3. VALIDATE both: a scan under SHARE UPDATE EXCLUSIVE, which lets reads and
 *    writes go on.
 *
 * Run without a transaction (the host's runner, `transaction = false` for this
 * migration, or TypeORM's `transaction: 'none'`) each step is its own short
 * transaction, and a re-run after a failure part-way finds nothing to undo (the
 * ADD replaces a constraint a failed run left). Run inside a caller's
 * transaction (TypeORM's default `migrationsRun`, mode 'all' or 'each'), the
 * three steps share that transaction, so the ACCESS EXCLUSIVE lock lasts until
 * it commits, scans included. TypeORM refuses a migration's own
 * `transaction = false` under mode 'all', which is why this one does not
 * declare it and offers `runsOwnTransactions` for a runner that can honour it.
 */
export class FiniteNotificationTimes1796169600000 implements MigrationInterface {
  readonly name = 'FiniteNotificationTimes1796169600000';

  /** Safe to run with `transaction = false`: it then opens its own short transactions. */
  readonly runsOwnTransactions = true;

  async up(queryRunner: QueryRunner): Promise<void> {
    const ownTransactions = !queryRunner.isTransactionActive;
    const step = async (statements: () => Promise<void>): Promise<void> => {
      if (!ownTransactions) return statements();
      await queryRunner.startTransaction();
      try {
        await statements();
        await queryRunner.commitTransaction();
      } catch (error) {
        await queryRunner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
    };

    await step(async () => {
      const [{ previous }] = (await queryRunner.query(
        `SELECT current_setting('lock_timeout') AS previous`,
      )) as Array<{ previous: string }>;
      await queryRunner.query(`SET LOCAL lock_timeout = '${ADD_CONSTRAINT_LOCK_TIMEOUT}'`);
      try {
        await queryRunner.query(`
          ALTER TABLE notifications
            DROP CONSTRAINT IF EXISTS notifications_next_attempt_at_finite,
            DROP CONSTRAINT IF EXISTS notifications_scheduled_at_finite,
            ADD CONSTRAINT notifications_next_attempt_at_finite
              CHECK (next_attempt_at > '-infinity') NOT VALID,
            ADD CONSTRAINT notifications_scheduled_at_finite
              CHECK (scheduled_at > '-infinity') NOT VALID`);
      } catch (error) {
        if ((error as { code?: unknown }).code !== '55P03') throw error; // lock_not_available
        throw new Error(
          `${this.name}: could not lock table notifications within ${ADD_CONSTRAINT_LOCK_TIMEOUT} ` +
            `to add its CHECK constraints: a long transaction holds a lock on it. Nothing was ` +
            `changed; start again once it has finished.`,
          { cause: error },
        );
      }
      // Inside a caller's transaction, later statements keep the caller's own timeout.
      await queryRunner.query(`SELECT set_config('lock_timeout', $1, true)`, [previous]);
    });

    await step(async () => {
      const [{ normalised }] = (await queryRunner.query(`
        WITH normalised AS (
          UPDATE notifications
             SET next_attempt_at = CASE WHEN next_attempt_at = '-infinity' THEN now() ELSE next_attempt_at END,
                 scheduled_at    = CASE WHEN scheduled_at    = '-infinity' THEN now() ELSE scheduled_at END,
                 updated_at      = now()
           WHERE next_attempt_at = '-infinity' OR scheduled_at = '-infinity'
          RETURNING 1)
        SELECT count(*)::int AS normalised FROM normalised`)) as Array<{ normalised: number }>;
      if (normalised > 0) {
        queryRunner.connection.logger.logMigration(
          `${this.name}: ${normalised} notification(s) due at '-infinity' set due now()`,
        );
      }
    });

    await step(async () => {
      await queryRunner.query(`
        ALTER TABLE notifications
          VALIDATE CONSTRAINT notifications_next_attempt_at_finite,
          VALIDATE CONSTRAINT notifications_scheduled_at_finite`);
    });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications
        DROP CONSTRAINT notifications_scheduled_at_finite,
        DROP CONSTRAINT notifications_next_attempt_at_finite`);
  }
}
