import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { compileClaimDueRows } from '../../libs/notifications-retry/src/persistence/sql/claim-due-rows.sql';
import { compileCountFailedBacklog } from '../../libs/notifications-retry/src/persistence/sql/count-failed-backlog.sql';
import { compileCountWaitingRows } from '../../libs/notifications-retry/src/persistence/sql/count-waiting-rows.sql';
import { fenceValues } from '../../libs/notifications-retry/src/persistence/sql/lease-fence-parameters';
import { leaseFenceSql } from '../../libs/notifications-retry/src/persistence/sql/lease-fence.sql';
import { ROW_COUNT_CAP } from '../../libs/notifications-retry/src/cycle/row-counts';

export interface ExplainedQuery {
  readonly name: string;
  readonly sql: string;
  readonly plan: string;
  readonly executionMs: number;
}

interface Query {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

const LEASE = { key: 'explain:claim', owner: 'explain', fencingToken: 1 };

/**
 * EXPLAIN ANALYZE of the statements the cycle compiles at start, exactly as it
 * binds them (the compile functions are the cycle's own): the claim, the two
 * bounded counts, and for comparison the claim as an OR of the two due
 * conditions. Each runs in a transaction that is rolled back, so the claim's
 * stamps are undone.
 */
export async function explainClaimQueries(
  dataSource: DataSource,
  now: Date,
  channels: readonly string[],
  batchSize: number,
): Promise<ExplainedQuery[]> {
  const fence = { sql: leaseFenceSql(dataSource), params: () => [] };
  const claim = compileClaimDueRows(dataSource, fence);
  const waiting = compileCountWaitingRows(dataSource);
  const backlog = compileCountFailedBacklog(dataSource);
  const claimMs = 5_000 + 2_000 + 250;

  const queries: Array<readonly [string, Query]> = [
    [
      'claim (per channel a range scan of notifications_due_idx, FOR UPDATE SKIP LOCKED, stamped)',
      {
        sql: claim.text,
        parameters: claim.values({
          ...fenceValues([LEASE.key, LEASE.owner, LEASE.fencingToken]),
          channels,
          quotas: channels.map(() => batchSize),
          claimMs: channels.map(() => claimMs),
          now,
          limit: batchSize,
          excluded: [],
          claimToken: randomUUID(),
        }),
      },
    ],
    [
      `due rows of the channels left out (capped at ${ROW_COUNT_CAP} per channel)`,
      {
        sql: waiting.text,
        parameters: waiting.values({ claimed: channels, now, cap: ROW_COUNT_CAP }),
      },
    ],
    [
      `failed backlog (capped at ${ROW_COUNT_CAP} per channel)`,
      { sql: backlog.text, parameters: backlog.values({ cap: ROW_COUNT_CAP }) },
    ],
    [
      'for comparison: the same candidates as an OR of the two conditions',
      {
        sql: `SELECT id FROM notifications
               WHERE channel = ANY($1::text[])
                 AND ((status = 'Failed' AND next_attempt_at <= $2) OR (status = 'Pending' AND scheduled_at <= $2))
               ORDER BY coalesce(next_attempt_at, scheduled_at) LIMIT $3`,
        parameters: [channels, now, batchSize],
      },
    ],
  ];
  const explained: ExplainedQuery[] = [];
  for (const [name, query] of queries) explained.push(await explain(dataSource, name, query));
  return explained;
}

async function explain(
  dataSource: DataSource,
  name: string,
  query: Query,
): Promise<ExplainedQuery> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  try {
    // A lease the fence accepts, for as long as the transaction lives.
    await runner.query(
      `INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
       VALUES ($1, $2, $3, now(), now() + interval '1 hour')`,
      [LEASE.key, LEASE.owner, LEASE.fencingToken],
    );
    const rows = (await runner.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${query.sql}`, [
      ...query.parameters,
    ])) as Array<{ 'QUERY PLAN': string }>;
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const match = /Execution Time: ([\d.]+) ms/.exec(plan);
    return {
      name,
      sql: query.sql.replace(/\s+/g, ' ').trim(),
      plan,
      executionMs: match ? Number(match[1]) : NaN,
    };
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
}
