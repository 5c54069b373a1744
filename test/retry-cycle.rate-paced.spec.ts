import { completed } from './support/cycle-reports';
import { useRetryTestApp } from './support/retry-test-app';

/**
 * DESIGN §3.4: a rate-limited channel is claimed only as far ahead as its pace
 * allows, each claim long enough to cover its wait, so it delivers at its rate
 * for the whole cycle: not one row per cycle with the rest claimed, parked and
 * handed back.
 */
describe('rate-paced claims (real PostgreSQL)', () => {
  // Scaled from 0.25/s in a 45 s cycle with the default 2 s settle margin: slots further apart than
  // the margin a claim keeps beyond the channel timeout.
  describe('a channel at 2 calls/s in a 5 s cycle with a 200 ms settle margin', () => {
    const t = useRetryTestApp({
      options: { concurrency: 200, batchSize: 200, maxCycleDurationMs: 5_000, settleMarginMs: 200 },
      channels: [{ key: 'email', rateLimitPerSec: 2, timeoutMs: 1_000 }],
    });

    it('sends at its rate for the whole cycle, evenly spaced, with few claims and no hand-back', async () => {
      const ids = await t.dueRows(30);

      const report = completed(await t.app.cycles.runCycle());

      // Slots at 0, 0.5, …, 4.5 s: ten of them, give or take one at the deadline's edge.
      const starts = t.app.provider.calls.map((call) => call.startedAt);
      expect(starts.length).toBeGreaterThanOrEqual(9);
      expect(starts.length).toBeLessThanOrEqual(11);
      // The pacer lets calls through 501 ms apart; the adapter sees each a few ms later, by how
      // busy the event loop is, so a gap may look shorter by that much but the pace never adds up
      // to more than 2/s.
      for (let i = 1; i < starts.length; i++) {
        expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(450);
        // No stall behind a handed-back claim: the next call comes at its slot.
        expect(starts[i] - starts[i - 1]).toBeLessThan(1_000);
      }
      expect(starts[starts.length - 1] - starts[0]).toBeGreaterThanOrEqual(
        (starts.length - 1) * 500 - 50,
      );
      expect(report.counts.sent).toBe(starts.length);
      expect(report.counts.skipped).toBe(0);
      // One claim a slot, at most: no claim churn.
      expect(report.timings.claim.count).toBeLessThanOrEqual(starts.length + 1);
      // The oldest rows first; the rest still due, untouched.
      const sent = new Set(t.app.provider.calls.map((call) => call.message.id));
      expect(ids.slice(-starts.length).every((id) => sent.has(id))).toBe(true);
      const [{ claimed }] = await t.ds.query<Array<{ claimed: number }>>(
        `SELECT count(*)::int AS claimed FROM notifications WHERE claim_token IS NOT NULL`,
      );
      expect(claimed).toBe(0);
    });
  });

  describe('a channel at 1 call per minute', () => {
    const t = useRetryTestApp({
      options: { concurrency: 200, batchSize: 200 },
      channels: [{ key: 'email', rateLimitPerSec: 1 / 60, timeoutMs: 1_000 }],
    });

    it('sends one row per cycle, claims once and hands nothing back; the cycle does not wait for the next slot', async () => {
      await t.dueRows(5);

      const first = completed(await t.app.cycles.runCycle());
      const second = completed(await t.app.cycles.runCycle());

      expect(first.counts.sent).toBe(1);
      expect(first.counts.skipped).toBe(0);
      expect(first.timings.claim.count).toBe(1);
      expect(first.durationMs).toBeLessThan(10_000);
      // Within the minute: its slot has not come, nothing is claimed.
      expect(second.counts.processed).toBe(0);
      expect(second.counts.skipped).toBe(0);
      expect(second.timings.claim.count).toBe(0);
      expect(t.app.provider.calls).toHaveLength(1);
    });
  });

  describe('a fast channel at 50 calls/s in a 2 s cycle', () => {
    const t = useRetryTestApp({
      options: { concurrency: 200, batchSize: 500, maxCycleDurationMs: 2_000 },
      channels: [{ key: 'email', rateLimitPerSec: 50, timeoutMs: 1_000 }],
    });

    it('claims many rows at a time, not one per rate slot', async () => {
      await t.dueRows(300);

      const report = completed(await t.app.cycles.runCycle());

      // 50/s for 2 s: about 100 calls on an idle machine (a loaded one starts each a little late, and
      // the pacer counts from the real start, so fewer), at most 55 in any second (a call whose timer
      // fired late comes closer to the next one than its 20 ms slot; it never adds a call).
      const starts = t.app.provider.calls.map((call) => call.startedAt);
      expect(starts.length).toBeGreaterThanOrEqual(40);
      expect(starts.length).toBeLessThanOrEqual(101);
      const tooDense = starts.filter(
        (start, i) => i + 55 < starts.length && starts[i + 55] - start < 1_000,
      );
      expect(tooDense).toEqual([]);
      // Claimed only as far ahead as the pace allows: what goes back is what the deadline caught
      // still waiting for its slot (none on an idle machine; a loaded one starts calls late), at
      // most one horizon (1 s at 50/s), never a claim that lapsed in the queue.
      const handedBack = t.app.logs.events('claims-released');
      expect(handedBack.map((line) => line.reason)).toEqual(handedBack.map(() => 'deadline'));
      expect(report.counts.skipped).toBeLessThanOrEqual(50);
      // A claim every half horizon (500 ms) or so: a handful, each of many rows, not one per call.
      expect(report.timings.claim.count).toBeLessThanOrEqual(10);
      expect(starts.length).toBeGreaterThanOrEqual(4 * report.timings.claim.count);
    });
  });
});
