import { setTimeout as delay } from 'node:timers/promises';
import { Client } from 'pg';
import { ConnectionPoolBudget } from '../libs/notifications-retry/src/persistence/connection-pool-budget';
import { completed } from './support/cycle-reports';
import { readNotification } from './support/fixtures';
import { useRetryTestApp } from './support/retry-test-app';

/** How long the lock on the first row is held at most, if the second row never starts. */
const LOCK_HELD_AT_MOST_MS = 3_000;
/** Rows per outcome statement (the cycle's group commit). */
const GROUP_ROWS = 100;

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

/**
 * Rows being written are held too: the bound on rows held counts the slots,
 * as many claimed ahead, and what the write statements carry at once. With a
 * bound of twice the slots only, a slow write left the slots without claimed
 * rows; past the bound, writes have fallen behind and nothing more is claimed.
 */
describe('rows held while outcome writes wait (real PostgreSQL)', () => {
  const t = useRetryTestApp({ options: { concurrency: 1, drain: true, batchSize: 10 } });
  const ROWS = 450;

  it('keeps calling while writes wait, up to the rows the write statements carry, then claims no more', async () => {
    await t.dueRows(ROWS);
    const capacity = t.app.module.get(ConnectionPoolBudget).writeStatements * GROUP_ROWS;
    // Every outcome write inserts its event into the outbox: a lock on the table makes them all wait.
    const locker = new Client({ connectionString: t.db.url });
    await locker.connect();
    t.teardown(() => locker.end());
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE notification_outbox IN EXCLUSIVE MODE');
    t.app.provider.respondWith(async (message) => ({ providerMessageId: `p-${message.id}` }));

    const cycle = t.app.cycles.runCycle();
    // The calls go on until the rows held reach the bound (one slot, one row claimed ahead, the
    // write statements' rows), then stop: wait for the bound or, if it is never reached, a while.
    const bound = 2 * 1 + capacity;
    const giveUpAt = Date.now() + 15_000;
    while (t.app.provider.calls.length < bound && Date.now() < giveUpAt) await delay(50);
    await delay(300);
    const seen = t.app.provider.calls.length;
    const [{ claimed }] = await t.ds.query<Array<{ claimed: number }>>(
      'SELECT count(*)::int AS claimed FROM notifications WHERE claim_token IS NOT NULL',
    );
    await locker.query('COMMIT');
    const report = completed(await cycle);

    expect(claimed).toBeLessThanOrEqual(bound);
    expect(seen).toBeGreaterThan(capacity / 2);
    expect(seen).toBeLessThanOrEqual(bound);
    expect(report.counts).toMatchObject({ processed: ROWS, sent: ROWS });
  });
});

/**
 * A row claimed ahead waits in the queue for a call slot; its claim is that
 * much longer, so the wait does not come out of its settle margin (DESIGN
 * §3.4: an answer inside the margin is the outcome).
 */
describe('rows claimed ahead keep their settle margin (real PostgreSQL)', () => {
  const TIMEOUT_MS = 300;
  const MARGIN_MS = 400;
  const t = useRetryTestApp({
    options: { concurrency: 1, drain: true, batchSize: 100, settleMarginMs: MARGIN_MS },
    channels: [{ key: 'email', timeoutMs: TIMEOUT_MS }],
  });

  it('takes an answer 300 ms into the margin as the outcome for a row that waited 150 ms in the queue', async () => {
    // Fast calls set a pace, so the cycle claims a row ahead; the slow call keeps that row
    // waiting in the queue; the last row answers 300 ms after its timeout, inside the margin.
    const FAST = 30;
    await t.dueRows(FAST + 2);
    let calls = 0;
    let late = '';
    t.app.provider.respondWith(async (message) => {
      calls++;
      if (calls === FAST + 1) await delay(150);
      else if (calls === FAST + 2) {
        late = message.id;
        await delay(TIMEOUT_MS + 300);
      } else await delay(5);
      return { providerMessageId: `p-${message.id}` };
    });

    const report = completed(await t.app.cycles.runCycle());

    expect(report.counts).toMatchObject({ processed: FAST + 2, sent: FAST + 2, retried: 0 });
    expect(await readNotification(t.ds, late)).toMatchObject({
      status: 'Sent',
      attempts: 2,
      last_error_code: null,
    });
    expect(t.app.provider.callsFor(late)).toBe(1);
  });
});
