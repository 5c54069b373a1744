import type { DataSource } from 'typeorm';
import { PostgresDistributedLock } from '../libs/notifications-retry/src/locking/postgres-distributed-lock';
import { Registry } from 'prom-client';
import { RetryMetrics } from '../libs/notifications-retry/src/observability/retry-metrics';
import { resolveOptions } from '../libs/notifications-retry/src/options/resolve-options';
import { PreparedStatementMode } from '../libs/notifications-retry/src/persistence/prepared-statement-mode';
import { SqlRunner } from '../libs/notifications-retry/src/persistence/sql-runner';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

const KEY = 'notifications:retry-worker';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgresDistributedLock (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let lock: PostgresDistributedLock;

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    const options = resolveOptions({ metrics: { registry: new Registry() } });
    const statements = new PreparedStatementMode(options, ds);
    lock = new PostgresDistributedLock(
      ds,
      new SqlRunner(ds, statements),
      new RetryMetrics(options),
    );
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  beforeEach(() => ds.query('TRUNCATE distributed_locks'));

  it('grants the first owner a lease with fencing token 1 and refuses a second owner while it holds', async () => {
    const first = await lock.acquire(KEY, 'instance-a', 90_000);
    expect(first).toMatchObject({ key: KEY, owner: 'instance-a', fencingToken: 1 });

    expect(await lock.acquire(KEY, 'instance-b', 90_000)).toBeNull();
    // Not even the same owner gets a second concurrent lease.
    expect(await lock.acquire(KEY, 'instance-a', 90_000)).toBeNull();
    const [row] = await ds.query(`SELECT owner, fencing_token FROM distributed_locks`);
    expect(row).toEqual({ owner: 'instance-a', fencing_token: '1' });
  });

  it('is taken over after expiry and not before, with a higher fencing token', async () => {
    expect(await lock.acquire(KEY, 'instance-a', 400)).not.toBeNull();
    expect(await lock.acquire(KEY, 'instance-b', 90_000)).toBeNull();

    await sleep(500);
    const taken = await lock.acquire(KEY, 'instance-b', 90_000);

    expect(taken).toMatchObject({ key: KEY, owner: 'instance-b', fencingToken: 2 });
  });

  it('does not wait for an expired lease whose former owner is still writing under it: it answers not acquired at once', async () => {
    const lease = await lock.acquire(KEY, 'instance-a', 300);
    expect(lease).not.toBeNull();
    // Instance a, frozen inside a row's transaction after its fenced write took the share lock.
    const frozen = ds.createQueryRunner();
    await frozen.connect();
    await frozen.startTransaction();
    await frozen.query(`SELECT 1 FROM distributed_locks WHERE key = $1 FOR SHARE`, [KEY]);
    try {
      await sleep(400);
      const started = Date.now();
      expect(await lock.acquire(KEY, 'instance-b', 90_000)).toBeNull();
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await frozen.rollbackTransaction();
      await frozen.release();
    }
    // Once it is gone, the takeover goes through.
    expect(await lock.acquire(KEY, 'instance-b', 90_000)).toMatchObject({ fencingToken: 2 });
  });

  it('judges expiry by the database clock, not by the caller, and returns the database time of the acquire', async () => {
    const [{ db_now }] = await ds.query(`SELECT now() AS db_now`);
    const lease = await lock.acquire(KEY, 'instance-a', 90_000);
    expect(Math.abs(lease!.acquiredAt!.getTime() - (db_now as Date).getTime())).toBeLessThan(5_000);
    // Expiry is stored relative to the database's now(); an app whose clock runs ahead changes nothing.
    const [row] = await ds.query(
      `SELECT round(extract(epoch FROM expires_at - acquired_at))::int AS ttl_s,
              abs(extract(epoch FROM acquired_at - now())) < 5 AS db_clock FROM distributed_locks`,
    );
    expect(row).toEqual({ ttl_s: 90, db_clock: true });
    expect(lease).not.toBeNull();
  });

  it('judges the fence at the statement that embeds it, not at the start of a transaction', async () => {
    const lease = await lock.acquire(KEY, 'instance-a', 300);
    expect(lease).not.toBeNull();
    const verdicts = await ds.transaction(async (manager) => {
      // now() is fixed from here on; statement_timestamp() is not.
      const fence = async () =>
        (await manager.query<unknown[]>(lock.fence.sql, [...lock.fence.params(lease!)])).length;
      const early = await fence();
      await sleep(400);
      return [early, await fence()];
    });
    expect(verdicts).toEqual([1, 0]);
  });

  it("states its fence with the lease's expiry, for claims that must not outlive it", async () => {
    const lease = await lock.acquire(KEY, 'instance-a', 90_000);
    const [row] = await ds.query(lock.fence.sql, [...lock.fence.params(lease!)]);
    const [stored] = await ds.query(`SELECT expires_at FROM distributed_locks`);
    expect((row as { expires_at: Date }).expires_at).toEqual(stored.expires_at);
  });

  it('releases only its own lease: a stale owner cannot free a lease someone else took over', async () => {
    const stale = await lock.acquire(KEY, 'instance-a', 300);
    await sleep(400);
    const current = await lock.acquire(KEY, 'instance-b', 90_000);
    expect(current?.fencingToken).toBe(2);

    await lock.release(stale!);
    expect(await lock.acquire(KEY, 'instance-c', 90_000)).toBeNull();

    await lock.release(current!);
    expect(await lock.acquire(KEY, 'instance-c', 90_000)).toMatchObject({
      key: KEY,
      owner: 'instance-c',
      fencingToken: 3,
    });
  });

  async function stored(): Promise<{ at: Date | null; by: string | null; live: boolean }> {
    const [row]: Array<{ at: Date | null; by: string | null; live: boolean }> = await ds.query(
      `SELECT last_completed_at AS at, last_completed_by AS by, expires_at > now() AS live
         FROM distributed_locks WHERE key = $1`,
      [KEY],
    );
    return row;
  }

  it('records a completed cycle with its release, by the database clock and the owner; a plain release records nothing', async () => {
    const first = await lock.acquire(KEY, 'instance-a', 90_000);
    await lock.release(first!);
    expect(await stored()).toEqual({ at: null, by: null, live: false });

    const second = await lock.acquire(KEY, 'instance-b', 90_000);
    const [{ before }] = await ds.query(`SELECT statement_timestamp() AS before`);
    await lock.release(second!, { cycleCompleted: true });
    const [{ after }] = await ds.query(`SELECT statement_timestamp() AS after`);

    const record = await stored();
    expect(record).toMatchObject({ by: 'instance-b', live: false });
    expect(record.at!.getTime()).toBeGreaterThanOrEqual((before as Date).getTime());
    expect(record.at!.getTime()).toBeLessThanOrEqual((after as Date).getTime());
    // A later plain release keeps the record.
    const third = await lock.acquire(KEY, 'instance-c', 90_000);
    await lock.release(third!);
    expect(await stored()).toEqual({ ...record, live: false });
  });

  it('records a cycle that outlived its lease while nobody took it, and none whose lease was taken over', async () => {
    const overran = await lock.acquire(KEY, 'instance-a', 300);
    await sleep(400);
    await lock.release(overran!, { cycleCompleted: true });
    expect(await stored()).toMatchObject({ by: 'instance-a' });
    const recorded = await stored();

    const stale = await lock.acquire(KEY, 'instance-b', 300);
    await sleep(400);
    const current = await lock.acquire(KEY, 'instance-c', 90_000);
    await lock.release(stale!, { cycleCompleted: true });

    expect(await stored()).toEqual({ ...recorded, live: true });
    await lock.release(current!);
  });

  it('reads the record with the database time, never waiting for a session that keeps the lease row locked', async () => {
    const [{ now: beforeAny }] = await ds.query(`SELECT now()`);
    const none = await lock.lastCompletedCycle(KEY);
    expect(none).toMatchObject({ at: null, by: null });
    expect(none.now.getTime()).toBeGreaterThanOrEqual((beforeAny as Date).getTime());

    const lease = await lock.acquire(KEY, 'instance-a', 90_000);
    await lock.release(lease!, { cycleCompleted: true });
    const { at, by } = await stored();
    const stuck = ds.createQueryRunner();
    await stuck.connect();
    await stuck.startTransaction();
    await stuck.query(`SELECT 1 FROM distributed_locks WHERE key = $1 FOR UPDATE`, [KEY]);
    try {
      const started = Date.now();
      const read = await lock.lastCompletedCycle(KEY);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(read).toMatchObject({ at, by });
      expect(read.now.getTime()).toBeGreaterThanOrEqual(at!.getTime());
    } finally {
      await stuck.rollbackTransaction();
      await stuck.release();
    }
  });

  it('lets exactly one of many simultaneous contenders win', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => lock.acquire(KEY, `instance-${i}`, 90_000)),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it('keeps separate keys independent', async () => {
    expect(await lock.acquire('a', 'x', 90_000)).not.toBeNull();
    expect(await lock.acquire('b', 'y', 90_000)).not.toBeNull();
  });
});
