import { Client } from 'pg';
import { completed } from './support/cycle-reports';
import { readNotification } from './support/fixtures';
import { useRetryTestApp } from './support/retry-test-app';

/** How long the lock on the first row is held at most, if the second row never starts. */
const LOCK_HELD_AT_MOST_MS = 3_000;

/**
 * DESIGN §3.4: `concurrency` bounds calls in flight, not outcome writes. A
 * row whose call is decided gives its slot to the next row at once, while its
 * own outcome is still being written.
 */
describe('call slots (real PostgreSQL)', () => {
  const t = useRetryTestApp({ options: { concurrency: 1, drain: true, batchSize: 10 } });

  it("starts the next row's call while the previous row's outcome write waits", async () => {
    const [first, second] = await t.dueRows(2);
    // Another session locks the row called first while its call runs, so that row's outcome
    // write waits on the lock; the lock goes once the second row's call has started (or after
    // LOCK_HELD_AT_MOST_MS, when a worker would wait for the write before calling again).
    const locker = new Client({ connectionString: t.db.url });
    await locker.connect();
    t.teardown(() => locker.end());
    const timeline: string[] = [];
    let release: (why: string) => Promise<void> = () => Promise.resolve();
    let calls = 0;
    t.app.provider.respondWith(async (message) => {
      if (++calls === 1) {
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM notifications WHERE id = $1 FOR UPDATE', [message.id]);
        let released = false;
        release = async (why) => {
          if (released) return;
          released = true;
          timeline.push(why);
          await locker.query('COMMIT');
        };
        const fallback = setTimeout(
          () => void release('lock released by timeout'),
          LOCK_HELD_AT_MOST_MS,
        );
        fallback.unref();
      } else {
        timeline.push('second call started');
        await release('lock released by the second call');
      }
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await t.app.cycles.runCycle());

    expect(timeline).toEqual(['second call started', 'lock released by the second call']);
    expect(report.counts).toMatchObject({ processed: 2, sent: 2 });
    for (const id of [first, second]) {
      expect(await readNotification(t.ds, id)).toMatchObject({ status: 'Sent' });
    }
  });
});
