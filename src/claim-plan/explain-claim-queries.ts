import type { DataSource, Logger as TypeOrmLogger } from 'typeorm';
import { NotificationRepository } from '../../libs/notifications-retry/src/persistence/notification.repository';

export interface ExplainedQuery {
  readonly name: string;
  readonly sql: string;
  readonly plan: string;
  readonly executionMs: number;
}

interface CapturedQuery {
  readonly sql: string;
  readonly parameters: unknown[];
}

/** Keeps what TypeORM really sends, parameters included, instead of what we think it sends. */
class CapturingQueryLogger implements TypeOrmLogger {
  readonly queries: CapturedQuery[] = [];
  logQuery(sql: string, parameters?: unknown[]): void {
    this.queries.push({ sql, parameters: parameters ?? [] });
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

/**
 * Runs the claim the way the cycle does (candidate scan, then the per-row lock
 * through TypeORM's query builder), captures the SQL, and EXPLAIN ANALYZEs each
 * captured statement with its own parameters.
 */
export async function explainClaimQueries(
  dataSource: DataSource,
  now: Date,
  channels: readonly string[],
  batchSize: number,
): Promise<ExplainedQuery[]> {
  const repository = new NotificationRepository(dataSource);
  const capture = new CapturingQueryLogger();
  const previous = dataSource.logger;
  // Query runners call the DataSource's logger for every statement, whatever `logging` says.
  dataSource.logger = capture;
  let candidateSql: CapturedQuery;
  let lockSql: CapturedQuery;
  try {
    const candidates = await repository.findDueCandidates(
      channels.map((channel) => ({ channel, quota: batchSize })),
      now,
      batchSize,
    );
    candidateSql = capture.queries[capture.queries.length - 1];
    if (candidates.length === 0) throw new Error('the fixture has no due rows to claim');
    await dataSource.transaction(async (manager) => {
      const mark = capture.queries.length;
      await repository.lockIfDue(manager, candidates[0], now);
      lockSql = capture.queries.slice(mark).find((q) => /FOR UPDATE/i.test(q.sql)) as CapturedQuery;
    });
  } finally {
    dataSource.logger = previous;
  }

  const naiveOr: CapturedQuery = {
    sql: `SELECT id FROM notifications
           WHERE channel = ANY($1::text[])
             AND ((status = 'Failed' AND next_attempt_at <= $2) OR (status = 'Pending' AND scheduled_at <= $2))
           ORDER BY coalesce(next_attempt_at, scheduled_at) LIMIT $3`,
    parameters: [channels, now, batchSize],
  };

  const explained: ExplainedQuery[] = [];
  for (const [name, query] of [
    ['candidate scan (per channel, merged by due_at)', candidateSql!],
    ['per-row lock (TypeORM, FOR UPDATE SKIP LOCKED)', lockSql!],
    ['for comparison: the same claim as an OR of the two conditions', naiveOr],
  ] as const) {
    explained.push(await explain(dataSource, name, query));
  }
  return explained;
}

async function explain(
  dataSource: DataSource,
  name: string,
  query: CapturedQuery,
): Promise<ExplainedQuery> {
  // EXPLAIN ANALYZE runs the statement: inside a rolled-back transaction, a FOR UPDATE leaves nothing behind.
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  try {
    const rows = (await runner.query(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${query.sql}`,
      query.parameters,
    )) as Array<{ 'QUERY PLAN': string }>;
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
