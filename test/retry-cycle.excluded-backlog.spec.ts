import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
} from './support/fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';

const BACKLOG = 300_000;
const ROW_COUNT_CAP = 100_000;

/**
 * DESIGN §3.2: counting is off the claim path. With a large due backlog of a
 * disabled channel at the head of the due index and a 200 ms statement_timeout
 * on the database (a common guard on application roles), a healthy channel
 * still delivers every cycle: the claim never reads the excluded rows, and the
 * counts are capped and may fail without failing the cycle.
 */
describe('an excluded backlog and a strict statement_timeout (real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let app: RetryTestApp;

  beforeAll(async () => {
    const setup = t.ds;
    await insertChannel(setup, { key: 'push', isEnabled: false });
    await insertChannel(setup, { key: 'email' });
    await setup.query(
      `INSERT INTO notifications (channel, recipient_address, body, status, attempts, next_attempt_at)
       SELECT 'push', 'device-' || g, 'b', 'Failed', 1, now() - interval '30 days' + g * interval '1 ms'
         FROM generate_series(1, $1::int) AS g`,
      [BACKLOG],
    );
    await setup.query('VACUUM ANALYZE notifications');
    await setup.query(`ALTER DATABASE ${t.db.name} SET statement_timeout = '200ms'`);
    // Connections opened from here on carry the timeout.
    app = await t.start({ clock: 'database' });
  }, 120_000);

  it('delivers the healthy channel every cycle and reports the excluded rows capped, or not at all', async () => {
    const setup = t.ds;
    const [{ statement_timeout: timeout }] =
      await app.dataSource.query<Array<{ statement_timeout: string }>>('SHOW statement_timeout');
    expect(timeout).toBe('200ms');
    for (let cycle = 0; cycle < 3; cycle++) {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          await insertNotification(setup, {
            status: 'Failed',
            attempts: 1,
            nextAttemptAt: minutesAgo(new Date(), 1),
          }),
        );
      }
      const failuresBefore = app.logs.events('row-count-failed').length;
      const report = completed(await app.cycles.runCycle());

      expect(report.counts).toMatchObject({ sent: 5, errors: 0 });
      for (const id of ids) expect((await readNotification(setup, id)).status).toBe('Sent');
      const push = report.excludedChannels.find((c) => c.channel === 'push');
      // Judged per cycle: either this cycle's capped count came back, or this cycle's count timed
      // out, was logged, and the push rows are not reported at all; the cycle went on either way.
      const failedNow = app.logs.events('row-count-failed').slice(failuresBefore);
      if (failedNow.length === 0) {
        expect(push).toEqual({ channel: 'push', reason: 'disabled', dueRows: ROW_COUNT_CAP });
      } else {
        expect(failedNow).toEqual([
          expect.objectContaining({ error: expect.stringContaining('statement timeout') }),
        ]);
        expect(push).toBeUndefined();
      }
    }
    // None of the excluded rows was touched.
    const [{ claimed }] = await setup.query<Array<{ claimed: number }>>(
      `SELECT count(*)::int AS claimed FROM notifications WHERE channel = 'push' AND (claim_token IS NOT NULL OR attempts <> 1)`,
    );
    expect(claimed).toBe(0);
  }, 60_000);
});
