import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { ClaimedRow } from './claimed-row';
import { OutcomeWriter } from './outcome-writer';
import type { RowOutcome } from './row-settlement';

const MAX_STATEMENTS = 4;

/** An outcome for a row whose claim lasts well past the test. */
function outcome(id: string): RowOutcome {
  return {
    kind: 'outcome',
    row: { id, claimedUntil: performance.now() + 60_000 } as ClaimedRow,
    transition: {} as RowOutcome['transition'],
    event: null,
    hold: null,
    attempt: {} as RowOutcome['attempt'],
    decidedAt: performance.now(),
  };
}

/**
 * The writer's statements each take a pooled connection (the pool budget
 * leaves the rest to the claim and the host): a statement for a group that
 * fails is followed by its rows one by one, within the same bound.
 */
describe('OutcomeWriter statements in flight', () => {
  it(`stays within maxStatements (${MAX_STATEMENTS}) while every group falls back to its rows one by one`, async () => {
    let inFlight = 0;
    let most = 0;
    const send = async (
      outcomes: readonly RowOutcome[],
    ): Promise<Array<{ leased: boolean; settled: string[] }>> => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await delay(5);
        // A bad row in every group: the group statement fails, each row alone is written.
        if (outcomes.length > 1) throw new Error('one row of the group cannot be written');
        return [{ leased: true, settled: outcomes.map((o) => o.row.id) }];
      } finally {
        inFlight--;
      }
    };
    const writer = new OutcomeWriter(send, {
      maxRows: 100,
      lingerMs: 2,
      maxStatements: MAX_STATEMENTS,
    });

    const results = await Promise.all(
      Array.from({ length: 4 * 100 }, (_, i) => writer.write(outcome(`row-${i}`))),
    );

    expect(results.every((r) => r.kind === 'written')).toBe(true);
    expect(most).toBeLessThanOrEqual(MAX_STATEMENTS);
    // The rows of a failed group still go out side by side where statements are free.
    expect(most).toBeGreaterThan(1);
  });
});
