import { judgeRetryWorkerHealth, type RetryWorkerHealthInput } from './retry-worker-health';

const STALE_MS = 180_000;
const DB_NOW = new Date('2030-06-01T12:00:00.000Z');
const ago = (ms: number): Date => new Date(DB_NOW.getTime() - ms);

/** An enabled instance past its start-up allowance; `completed` is what the lock's record says. */
function input(overrides: Partial<RetryWorkerHealthInput> = {}): RetryWorkerHealthInput {
  return {
    enabled: true,
    staleAfterMs: STALE_MS,
    uptimeMs: STALE_MS + 1,
    completed: { kind: 'recorded', record: { at: ago(60_000), by: 'app-1', now: DB_NOW } },
    lastCycle: null,
    now: DB_NOW,
    failedBacklog: null,
    misconfiguredChannels: [],
    pausedChannels: [],
    ...overrides,
  };
}

const recorded = (at: Date | null) =>
  ({ kind: 'recorded', record: { at, by: at ? 'app-1' : null, now: DB_NOW } }) as const;

describe('judgeRetryWorkerHealth', () => {
  it('is up while the recorded cycle is at most staleAfterMs old by the database clock, down just past it', () => {
    expect(judgeRetryWorkerHealth(input({ completed: recorded(ago(STALE_MS)) }))).toMatchObject({
      healthy: true,
      lastCompletedAt: ago(STALE_MS),
      lastCompletedBy: 'app-1',
    });
    expect(judgeRetryWorkerHealth(input({ completed: recorded(ago(STALE_MS + 1)) }))).toMatchObject(
      {
        healthy: false,
        reason: `no instance has completed a cycle for more than ${STALE_MS} ms (last ${ago(STALE_MS + 1).toISOString()} by app-1)`,
      },
    );
  });

  it('judges by the record whatever this instance did: a recent tick skipped for the lease is not enough', () => {
    const health = judgeRetryWorkerHealth(
      input({
        completed: recorded(ago(STALE_MS * 10)),
        lastCycle: { at: DB_NOW, status: 'lease-held' },
      }),
    );

    expect(health).toMatchObject({ healthy: false, lastCycleStatus: 'lease-held' });
  });

  it('gives an instance younger than staleAfterMs its allowance, whether a cycle was recorded or not', () => {
    for (const at of [null, ago(STALE_MS * 10)]) {
      expect(
        judgeRetryWorkerHealth(input({ uptimeMs: STALE_MS, completed: recorded(at) })),
      ).toMatchObject({ healthy: true });
      expect(
        judgeRetryWorkerHealth(input({ uptimeMs: STALE_MS + 1, completed: recorded(at) })),
      ).toMatchObject({ healthy: false });
    }
    expect(judgeRetryWorkerHealth(input({ completed: recorded(null) })).reason).toBe(
      `no instance has completed a cycle for more than ${STALE_MS} ms (none recorded)`,
    );
  });

  it('says "unknown" for a stale record that names no instance', () => {
    const at = ago(STALE_MS + 1);
    const completed = { kind: 'recorded', record: { at, by: null, now: DB_NOW } } as const;
    expect(judgeRetryWorkerHealth(input({ completed })).reason).toBe(
      `no instance has completed a cycle for more than ${STALE_MS} ms (last ${at.toISOString()} by unknown)`,
    );
  });

  it('is down with the error when the record cannot be read, even within the allowance', () => {
    const health = judgeRetryWorkerHealth(
      input({
        uptimeMs: 0,
        completed: {
          kind: 'failed',
          error: 'Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432',
        },
      }),
    );

    expect(health).toMatchObject({
      healthy: false,
      lastCompletedAt: null,
      reason:
        'cannot read the last completed cycle from the database: Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432',
    });
  });

  it('stays up where the worker is disabled, saying when the fleet is stale or unreadable', () => {
    expect(judgeRetryWorkerHealth(input({ enabled: false }))).toMatchObject({
      healthy: true,
      reason: 'worker disabled on this instance',
    });
    expect(
      judgeRetryWorkerHealth(input({ enabled: false, completed: recorded(ago(STALE_MS + 1)) })),
    ).toMatchObject({
      healthy: true,
      reason: `worker disabled on this instance; no instance has completed a cycle for more than ${STALE_MS} ms (last ${ago(STALE_MS + 1).toISOString()} by app-1)`,
    });
    expect(
      judgeRetryWorkerHealth(
        input({ enabled: false, completed: { kind: 'failed', error: 'boom' } }),
      ),
    ).toMatchObject({
      healthy: true,
      reason:
        'worker disabled on this instance; cannot read the last completed cycle from the database: boom',
    });
  });

  it("falls back on this instance's own ticks when the lock keeps no record, a lease-held tick counting", () => {
    const notKept = { kind: 'not-kept' } as const;
    for (const status of ['completed', 'lease-held'] as const) {
      expect(
        judgeRetryWorkerHealth(
          input({ completed: notKept, lastCycle: { at: ago(STALE_MS), status } }),
        ),
      ).toMatchObject({ healthy: true, lastCompletedAt: null });
    }
    expect(
      judgeRetryWorkerHealth(
        input({ completed: notKept, lastCycle: { at: ago(STALE_MS + 1), status: 'completed' } }),
      ),
    ).toMatchObject({ healthy: false, reason: `no cycle for more than ${STALE_MS} ms` });
  });
});
