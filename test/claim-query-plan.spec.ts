import type { DataSource } from 'typeorm';
import { explainClaimQueries, type ExplainedQuery } from '../src/claim-plan/explain-claim-queries';
import { loadClaimFixture } from '../src/claim-plan/load-claim-fixture';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/**
 * The claim must stay one index range scan however large the table grows, and
 * the counts off the claim path must stay bounded; the full 200k-row figures
 * come from `npm run explain:claim`.
 */
describe('claim query plan (real PostgreSQL, EXPLAIN ANALYZE of the compiled statements)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let claim: ExplainedQuery;
  let waiting: ExplainedQuery;
  let backlog: ExplainedQuery;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    const now = await loadClaimFixture(ds, { rows: 40_000 });
    [claim, waiting, backlog] = await explainClaimQueries(ds, now, ['email'], 200);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('claims with a range scan of the partial due index, never a sequential scan', () => {
    expect(claim.plan).toContain('Index Scan using notifications_due_idx on notifications');
    expect(claim.plan).not.toMatch(/Seq Scan on notifications/);
  });

  it('reads only the rows it claims: the disabled channel backlog at the head is never visited', () => {
    const scan = claim.plan
      .split('\n')
      .find((line) => line.includes('Index Scan using notifications_due_idx'));
    expect(scan).toMatch(/rows=200(\.00)? loops=1/);
    expect(claim.plan).not.toContain('Rows Removed by Filter');
  });

  it('locks with FOR UPDATE SKIP LOCKED (TypeORM pessimistic_write + skip_locked) and stamps the claim', () => {
    expect(claim.sql).toContain('FOR UPDATE SKIP LOCKED');
    expect(claim.sql).toMatch(
      /SET "claim_token" = \$\d+::uuid, "claim_expires_at" = statement_timestamp\(\)/,
    );
    expect(claim.plan).toContain('LockRows');
    expect(claim.plan).toMatch(/Update on notifications/);
  });

  it('counts off the claim path through the indexes, never a sequential scan of the table', () => {
    for (const count of [waiting, backlog]) {
      expect(count.plan).not.toMatch(/Seq Scan on notifications/);
      expect(count.plan).toMatch(/Index (Only )?Scan using notifications_(due|failed_backlog)_idx/);
    }
  });
});
