import { insertNotification, minutesAgo, readNotification } from './support/fixtures';
import { completed } from './support/cycle-reports';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

describe('drain mode claims ahead (real PostgreSQL)', () => {
  const t = useRetryTestApp({ options: { batchSize: 2, concurrency: 2, drain: true } });
  let app: RetryTestApp;

  beforeEach(() => {
    app = t.app;
  });

  it('claims the next rows while the last ones are in flight, never the same row twice', async () => {
    const now = app.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(
        await insertNotification(app.dataSource, {
          status: 'Failed',
          attempts: 1,
          nextAttemptAt: minutesAgo(now, 10 - i),
        }),
      );
    }
    // The first row answers at once, the second only after 800 ms: a worker that claims ahead
    // starts the third in the first one's slot while the second is still at its provider.
    const timeline: string[] = [];
    let inFlight = 0;
    let peak = 0;
    app.provider.respondWith(async (message) => {
      const row = ids.indexOf(message.id);
      timeline.push(`start ${row}`);
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, row === 1 ? 800 : 20));
      inFlight--;
      timeline.push(`end ${row}`);
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await app.cycles.runCycle());

    expect(report).toMatchObject({
      stopReason: 'no-more-due',
      counts: { processed: 6, skipped: 0 },
    });
    // Rows 2..5 went through the free slot before the slow row came back.
    expect(timeline.indexOf('start 5')).toBeLessThan(timeline.indexOf('end 1'));
    // A row in flight is claimed (out of the due range) when the next claim runs.
    expect(new Set(app.provider.calls.map((c) => c.message.id))).toEqual(new Set(ids));
    expect(app.provider.calls).toHaveLength(6);
    expect(peak).toBe(2);
  });

  it('lets the rows in flight finish, and releases the lease after them, when claiming ahead fails', async () => {
    const now = app.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        await insertNotification(app.dataSource, {
          status: 'Failed',
          attempts: 1,
          nextAttemptAt: minutesAgo(now, 10 - i),
        }),
      );
    }
    // The claim ahead runs when the first row is done; the second is still at its provider then.
    app.provider.respondWith(async (message) => {
      await new Promise((resolve) => setTimeout(resolve, message.id === ids[0] ? 20 : 300));
      return { providerMessageId: `p-${message.id}` };
    });
    // The database refuses the claim of the third row: the claim ahead fails.
    await app.dataSource.query(`
      CREATE FUNCTION refuse_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.claim_token IS NOT NULL AND NEW.id = '${ids[2]}' THEN
          RAISE EXCEPTION 'claim refused for the test';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_claim BEFORE UPDATE ON notifications
        FOR EACH ROW EXECUTE FUNCTION refuse_claim();`);
    try {
      await expect(app.cycles.runCycle()).rejects.toThrow('claim refused for the test');
    } finally {
      await app.dataSource.query(
        'DROP TRIGGER refuse_claim ON notifications; DROP FUNCTION refuse_claim()',
      );
    }

    // The claim failed while the second row was in flight; the cycle ended only after both rows
    // were written, and released the lease after them.
    expect(ids.map((id) => app.provider.callsFor(id))).toEqual([1, 1, 0, 0]);
    for (const id of ids.slice(0, 2)) {
      expect((await readNotification(app.dataSource, id)).status).toBe('Sent');
    }
    const [lease] = await app.dataSource.query(
      `SELECT expires_at <= now() AS released FROM distributed_locks`,
    );
    expect(lease).toEqual({ released: true });
  });
});
