import { completed } from './support/cycle-reports';
import { deferred } from './support/deferred';
import { outboxEvents, readNotification } from './support/fixtures';
import { settleGroups } from './support/settle-groups';
import { useRetryTestApp } from './support/retry-test-app';

const ROWS = 50;

/**
 * DESIGN §3.5: outcomes that finish together are written in one statement; a
 * statement that fails is written again row by row, so one bad row never
 * affects another; the bad row is held (attempt counted) instead.
 */
describe('group commit of outcomes (real PostgreSQL)', () => {
  const t = useRetryTestApp({ options: { concurrency: ROWS } });

  it(`commits 49 of a group of ${ROWS} when one row's write fails, and holds that row`, async () => {
    const ids = await t.dueRows(ROWS);
    const bad = ids[17];
    const before = await readNotification(t.ds, bad);
    await t.ds.query(`
      CREATE FUNCTION refuse_sent() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status = 'Sent' AND NEW.id = '${bad}' THEN RAISE EXCEPTION 'this row cannot be Sent'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_sent BEFORE UPDATE ON notifications FOR EACH ROW EXECUTE FUNCTION refuse_sent();`);
    // Every call answers at the same moment: their outcomes finish together.
    const gate = deferred();
    let started = 0;
    t.app.provider.respondWith(async (message) => {
      started++;
      await gate.promise;
      return { providerMessageId: `p-${message.id}` };
    });

    let report!: ReturnType<typeof completed>;
    try {
      const groups = await settleGroups(async () => {
        const run = t.app.cycles.runCycle();
        while (started < ROWS) await new Promise((r) => setTimeout(r, 5));
        gate.resolve();
        report = completed(await run);
      }, /UPDATE "notifications" AS n\s+SET "status"/);
      // Grouped: fewer statements than rows, at least one carrying many rows.
      expect(Math.max(...groups)).toBeGreaterThan(1);
      expect(groups.filter((size) => size > 1).length).toBeLessThan(ROWS);
    } finally {
      await t.ds.query('DROP TRIGGER refuse_sent ON notifications; DROP FUNCTION refuse_sent()');
    }

    expect(report.counts).toMatchObject({ sent: ROWS - 1, errors: 1, claimsLost: 0 });
    for (const id of ids.filter((id) => id !== bad)) {
      expect(await readNotification(t.ds, id)).toMatchObject({ status: 'Sent', claim_token: null });
      expect(await outboxEvents(t.ds, id)).toHaveLength(1);
    }
    expect(await readNotification(t.ds, bad)).toMatchObject({
      status: 'Failed',
      attempts: before.attempts + 1,
      last_error_code: 'outcome_not_recorded',
      claim_token: null,
    });
    expect(await outboxEvents(t.ds, bad)).toHaveLength(0);
  });
});
