import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { notificationsRetryEntities } from '../../libs/notifications-retry/src';
import { ROW_COUNT_CAP } from '../../libs/notifications-retry/src/cycle/row-counts';
import { compileClaimDueRows } from '../../libs/notifications-retry/src/persistence/sql/claim-due-rows.sql';
import { compileCountFailedBacklog } from '../../libs/notifications-retry/src/persistence/sql/count-failed-backlog.sql';
import { compileCountWaitingRows } from '../../libs/notifications-retry/src/persistence/sql/count-waiting-rows.sql';
import { fenceValues } from '../../libs/notifications-retry/src/persistence/sql/lease-fence-parameters';
import { leaseFenceSql } from '../../libs/notifications-retry/src/persistence/sql/lease-fence.sql';
import {
  BENCH_CHANNEL,
  EXCLUDED_CHANNEL,
  insertExcludedChannel,
  loadDueRows,
  vacuum,
} from './bench-database';
import { median, percentile } from './stats';

/** Claims timed per backlog size (after a warm-up). */
const CLAIM_CALLS = 200;
/** Calls of each count off the claim path. */
const COUNT_CALLS = 20;
/** The specification's batch: what one cycle claims by default. */
const BATCH = 200;
const LEASE = { key: 'bench:claim-latency', owner: 'bench', fencingToken: 1 };

export interface ClaimLatency {
  /** Due rows of the enabled channel. */
  readonly dueRows: number;
  /** Due rows of a disabled channel, all older than the enabled channel's (0: none). */
  readonly excludedAtHead: number;
  /** The claim statement of 200 rows, as the cycle compiles and binds it. */
  readonly claimMedianMs: number;
  readonly claimP95Ms: number;
  /**
   * Shared buffers the claim's scan of `notifications_due_idx` touched (EXPLAIN
   * ANALYZE, BUFFERS): the work the claim does, free of the machine's noise.
   */
  readonly claimScanBuffers: number;
  /** Shared buffers of the whole claim statement, the stamp's updates included. */
  readonly claimBuffers: number;
  /** The capped count of the excluded channels' due rows, off the claim path. */
  readonly waitingCountMedianMs: number;
  /** The capped count of the failed backlog, off the claim path. */
  readonly backlogCountMedianMs: number;
}

/**
 * Times the cycle's own claim statement (compiled from the entities exactly
 * as the cycle compiles it, batch 200, one enabled channel), wall clock with
 * the round trip, each in a transaction that is rolled back so every call
 * claims the same head of the index; and the two bounded counts. The table
 * holds `dueRows` due rows of the enabled channel and `excludedAtHead` due rows
 * of a disabled one, older than all of them (the head of the due index, which
 * the claim must not walk).
 */
export async function measureClaimLatency(
  url: string,
  client: Client,
  dueRows: number,
  excludedAtHead = 0,
): Promise<ClaimLatency> {
  const loaded = async (channel: string): Promise<number> =>
    (
      await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM notifications WHERE channel = $1`,
        [channel],
      )
    ).rows[0].n;
  const enabled = await loaded(BENCH_CHANNEL);
  if (enabled < dueRows) await loadDueRows(client, dueRows - enabled);
  if (excludedAtHead > 0) {
    await insertExcludedChannel(client);
    const excluded = await loaded(EXCLUDED_CHANNEL);
    if (excluded < excludedAtHead) {
      await loadDueRows(client, excludedAtHead - excluded, {
        channel: EXCLUDED_CHANNEL,
        atHead: true,
      });
    }
  }
  await vacuum(client, ['notifications']);

  // Metadata only: the statements are compiled from the entities as the cycle compiles them.
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities: notificationsRetryEntities,
  });
  await dataSource.initialize();
  try {
    const claim = compileClaimDueRows(dataSource, {
      sql: leaseFenceSql(dataSource),
      params: () => [],
    });
    const waiting = compileCountWaitingRows(dataSource);
    const backlog = compileCountFailedBacklog(dataSource);
    const time = async (calls: number, work: () => Promise<unknown>): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < calls; i++) {
        const started = performance.now();
        await work();
        samples.push(performance.now() - started);
      }
      return samples;
    };
    const claimValues = (): unknown[] =>
      claim.values({
        ...fenceValues([LEASE.key, LEASE.owner, LEASE.fencingToken]),
        channels: [BENCH_CHANNEL],
        quotas: [BATCH],
        claimMs: [7_250],
        now: new Date(),
        limit: BATCH,
        excluded: [],
        claimToken: randomUUID(),
      });
    const insertLease = (): Promise<unknown> =>
      client.query(
        `INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
         VALUES ($1, $2, $3, now(), now() + interval '1 hour')`,
        [LEASE.key, LEASE.owner, LEASE.fencingToken],
      );
    const claimBuffers = async (): Promise<{ scan: number; total: number }> => {
      await client.query('BEGIN');
      try {
        await insertLease();
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${claim.text}`,
          claimValues(),
        );
        const plan = rows[0]['QUERY PLAN'][0].Plan;
        const scans = planNodes(plan).filter(
          (node) => node['Index Name'] === 'notifications_due_idx',
        );
        return {
          scan: scans.reduce((sum, node) => sum + sharedBuffers(node), 0),
          total: sharedBuffers(plan),
        };
      } finally {
        await client.query('ROLLBACK');
      }
    };
    const claimOnce = async (): Promise<number> => {
      await client.query('BEGIN');
      try {
        await insertLease();
        const started = performance.now();
        const { rowCount } = await client.query({
          name: claim.name,
          text: claim.text,
          values: claimValues(),
        });
        const ms = performance.now() - started;
        if (rowCount !== BATCH)
          throw new Error(`the claim returned ${rowCount} rows, not ${BATCH}`);
        return ms;
      } finally {
        await client.query('ROLLBACK');
      }
    };
    for (let i = 0; i < 20; i++) await claimOnce();
    const claims: number[] = [];
    for (let i = 0; i < CLAIM_CALLS; i++) claims.push(await claimOnce());
    const buffers = await claimBuffers();
    const waitingCounts = await time(COUNT_CALLS, () =>
      client.query(
        waiting.text,
        waiting.values({ claimed: [BENCH_CHANNEL], now: new Date(), cap: ROW_COUNT_CAP }),
      ),
    );
    const backlogCounts = await time(COUNT_CALLS, () =>
      client.query(backlog.text, backlog.values({ cap: ROW_COUNT_CAP })),
    );
    return {
      dueRows,
      excludedAtHead,
      claimMedianMs: median(claims),
      claimP95Ms: percentile(claims, 95),
      claimScanBuffers: buffers.scan,
      claimBuffers: buffers.total,
      waitingCountMedianMs: median(waitingCounts),
      backlogCountMedianMs: median(backlogCounts),
    };
  } finally {
    await dataSource.destroy();
  }
}

interface PlanNode {
  readonly 'Index Name'?: string;
  readonly 'Shared Hit Blocks'?: number;
  readonly 'Shared Read Blocks'?: number;
  readonly Plans?: readonly PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** Blocks a node touched in shared buffers, found there or read in (a node counts its children's). */
function sharedBuffers(node: PlanNode): number {
  return (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0);
}
