import { startChildHost, type ChildHost } from './support/child-host';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';
import { ScriptedProviderAdapter, scriptedAdapterFor } from './support/scripted-provider-adapter';

const TIMEOUT_MS = 1_000;
/** The library's defaults: the settle margin, and the room kept for the outcome's write. */
const SETTLE_MARGIN_MS = 2_000;
const WRITE_ALLOWANCE_MS = 250;
const SlowAdapter = scriptedAdapterFor('slow');

/**
 * DESIGN §3.6: a worker killed mid-call leaves its row claimed; the claim
 * lapses at claim time + timeout + settle margin, and the row is due again
 * then, for any worker (here another app, on another lease key: the row's
 * recovery does not wait for the dead worker's lease).
 */
describe('crash recovery: SIGKILL of a worker mid-call (child process, real PostgreSQL)', () => {
  const t = useRetryDatabase();
  let host: ChildHost | undefined;

  afterEach(() => {
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
  });

  it('makes the row due again within timeout + margin, and another worker sends it once more', async () => {
    const { db, ds } = t;
    await insertChannel(ds, { key: 'email', providerKey: 'slow', timeoutMs: TIMEOUT_MS });
    const id = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: new Date(Date.now() - 60_000),
    });
    host = startChildHost(db.url, { RETRY_CONCURRENCY: '1', SLOW_SEND_MS: '60000' });
    await host.waitForLine((line) => line.event === 'slow-send-started', 45_000);
    const [claim] = await ds.query<Array<{ claim_expires_at: Date; claimed_at: Date }>>(
      `SELECT claim_expires_at, claim_expires_at - make_interval(secs => $2::double precision / 1000) AS claimed_at
         FROM notifications WHERE id = $1`,
      [id, TIMEOUT_MS + SETTLE_MARGIN_MS + WRITE_ALLOWANCE_MS],
    );
    // The rescuer starts while the dead-to-be worker still holds the claim: its start-up is not part
    // of the time to recovery, which is judged by its cycles, not by a wall-clock window.
    const rescuer: RetryTestApp = await t.start({
      clock: 'database',
      adapters: [ScriptedProviderAdapter, SlowAdapter],
      options: { lockKey: 'notifications:retry-worker:rescuer' },
    });
    const slow = rescuer.module.get(SlowAdapter);
    let resentAt: number | null = null;
    slow.respondWith((message) => {
      resentAt ??= Date.now();
      return { providerMessageId: `again-${message.id}` };
    });
    host.child.kill('SIGKILL');
    await host.exited;

    // Cycles that started once the claim had lapsed (a little slack for the database's and this
    // process's readings of one machine clock) and still did not send the row: there must be none.
    const lapsedAt = claim.claim_expires_at.getTime();
    let missedAfterLapse = 0;
    const deadline = Date.now() + 20_000;
    while (resentAt === null && Date.now() < deadline) {
      const cycleStartedAt = Date.now();
      completed(await rescuer.cycles.runCycle());
      if (resentAt === null && cycleStartedAt >= lapsedAt + 100) missedAfterLapse++;
      if (resentAt === null) await new Promise((r) => setTimeout(r, 25));
    }

    expect(resentAt).not.toBeNull();
    const dueAgainAfterMs = claim.claim_expires_at.getTime() - claim.claimed_at.getTime();
    const resentAfterMs = resentAt! - claim.claimed_at.getTime();
    console.log(
      `claim ${dueAgainAfterMs} ms (timeout ${TIMEOUT_MS} + margin ${SETTLE_MARGIN_MS} + write allowance ${WRITE_ALLOWANCE_MS}); sent again ${resentAfterMs} ms after the claim, ${resentAt! - claim.claim_expires_at.getTime()} ms after it lapsed`,
    );
    // Not before the claim lapsed (no second call while the first could still be answered) ...
    expect(resentAt!).toBeGreaterThanOrEqual(claim.claim_expires_at.getTime());
    // ... and by the first cycle that started after it lapsed: due again at claim + timeout + margin.
    expect(missedAfterLapse).toBe(0);
    expect(slow.calls.map((call) => call.idempotencyKey)).toEqual([id]);
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Sent',
      provider_message_id: `again-${id}`,
      claim_token: null,
    });
    expect(await outboxEvents(ds, id)).toHaveLength(1);
  }, 90_000);
});
