import type { DataSource } from 'typeorm';
import { explainClaimQueries, type ExplainedQuery } from '../src/claim-plan/explain-claim-queries';
import { loadClaimFixture } from '../src/claim-plan/load-claim-fixture';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/**
 * The claim must stay an index range scan however large the table grows; the
 * full 200k-row figures come from `npm run explain:claim`.
 */
describe('claim query plan (real PostgreSQL, EXPLAIN ANALYZE of the SQL TypeORM sends)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let candidate: ExplainedQuery;
  let lock: ExplainedQuery;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    const now = await loadClaimFixture(ds, { rows: 40_000 });
    [candidate, lock] = await explainClaimQueries(ds, now, ['email'], 200);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('finds candidates with a range scan of the partial due index, never a sequential scan', () => {
    expect(candidate.plan).toContain('Index Scan using notifications_due_idx on notifications');
    expect(candidate.plan).not.toMatch(/Seq Scan on notifications/);
  });

  it('reads only the rows it returns: the disabled channel backlog at the head is never visited', () => {
    const scan = candidate.plan
      .split('\n')
      .find((line) => line.includes('Index Scan using notifications_due_idx'));
    expect(scan).toMatch(/rows=200(\.00)? loops=1/);
    expect(candidate.plan).not.toContain('Rows Removed by Filter');
  });

  it('locks each row through its primary key with FOR UPDATE SKIP LOCKED and re-checks it is due', () => {
    expect(lock.sql).toMatch(/FOR UPDATE SKIP LOCKED$/);
    expect(lock.sql).toContain('due_at <= $3');
    expect(lock.plan).toContain('LockRows');
    expect(lock.plan).toContain('Index Scan using notifications_pkey on notifications');
  });
});
