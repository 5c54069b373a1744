import { performance } from 'node:perf_hooks';
import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { notificationsRetryEntities } from '../../libs/notifications-retry/src';
import { NotificationRepository } from '../../libs/notifications-retry/src/persistence/notification.repository';
import {
  BENCH_CHANNEL,
  EXCLUDED_CHANNEL,
  insertExcludedChannel,
  loadDueRows,
  vacuum,
} from './bench-database';
import { median, percentile } from './stats';

/** Calls of the candidate scan timed per backlog size (after a warm-up). */
const SCAN_CALLS = 200;
/** Calls of the per-cycle snapshot and the backlog count (they are slower, and not the target). */
const COUNT_CALLS = 20;
/** The specification's batch: what one cycle claims by default. */
const BATCH = 200;

export interface ClaimLatency {
  /** Due rows of the enabled channel. */
  readonly dueRows: number;
  /** Due rows of a disabled channel, all older than the enabled channel's (0: none). */
  readonly excludedAtHead: number;
  readonly scanMedianMs: number;
  readonly scanP95Ms: number;
  /**
   * `cycleSnapshot`: every cycle's first read, the candidate scan plus the
   * channel-disabled and failed-backlog counts, which read the whole backlog.
   */
  readonly snapshotMedianMs: number;
  /** `countFailedBacklog`: run again at the end of a cycle that committed rows. */
  readonly countBacklogMedianMs: number;
}

/**
 * Times the library's own candidate scan (`NotificationRepository.findDueCandidates`,
 * batch 200, one enabled channel) as the cycle calls it, wall clock including
 * the round trip, after loading the table up to `dueRows` due rows of the
 * enabled channel and `excludedAtHead` due rows of a disabled one, older than
 * all of them (the head of the due index, which the claim must not walk). Also
 * the per-cycle snapshot and the backlog count, which read the whole backlog.
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

  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities: notificationsRetryEntities,
    extra: { max: 2 },
  });
  await dataSource.initialize();
  try {
    const repository = new NotificationRepository(dataSource);
    const quotas = [{ channel: BENCH_CHANNEL, quota: BATCH }];
    const time = async (calls: number, work: () => Promise<unknown>): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < calls; i++) {
        const started = performance.now();
        await work();
        samples.push(performance.now() - started);
      }
      return samples;
    };
    const scan = () => repository.findDueCandidates(quotas, new Date(), BATCH);
    await time(20, scan);
    const scans = await time(SCAN_CALLS, scan);
    const snapshots = await time(COUNT_CALLS, () =>
      repository.cycleSnapshot(quotas, new Date(), BATCH),
    );
    const backlog = await time(COUNT_CALLS, () => repository.countFailedBacklog());
    return {
      dueRows,
      excludedAtHead,
      scanMedianMs: median(scans),
      scanP95Ms: percentile(scans, 95),
      snapshotMedianMs: median(snapshots),
      countBacklogMedianMs: median(backlog),
    };
  } finally {
    await dataSource.destroy();
  }
}
