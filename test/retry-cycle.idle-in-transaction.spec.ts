import { Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { DistributedLock, type NotificationsRetryExtensions } from '@pin/notifications-retry';
import type { Lease } from '@pin/notifications-retry/locking/lease';
import { PostgresDistributedLock } from '@pin/notifications-retry/locking/postgres-distributed-lock';
import { NotificationRepository } from '@pin/notifications-retry/persistence/notification.repository';
import { runInPooledPgTransaction } from '@pin/notifications-retry/persistence/pooled-pg-transaction';
import { IDLE_IN_TRANSACTION_GRACE_MS } from '@pin/notifications-retry/cycle/row-processor';
import { completed } from './support/cycle-reports';
import { insertChannel, insertNotification, minutesAgo } from './support/fixtures';
import {
  IDLE_TIMEOUT_SETTING_SQL,
  idleTimeoutsAtRowLocks,
  withQueryHook,
} from './support/pg-query-hook';
import { createRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/** The default lock without its SQL fence: rows then run in TypeORM transactions. */
@Injectable()
class UnfencedPostgresLock extends DistributedLock {
  private readonly lock: PostgresDistributedLock;

  constructor(dataSource: DataSource) {
    super();
    this.lock = new PostgresDistributedLock(dataSource);
  }

  acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    return this.lock.acquire(key, owner, ttlMs);
  }

  confirm(lease: Lease, manager: EntityManager): Promise<boolean> {
    return this.lock.confirm(lease, manager);
  }

  release(lease: Lease): Promise<void> {
    return this.lock.release(lease);
  }
}

/**
 * A row transaction is idle only while its provider call runs, which the
 * channel timeout keeps inside the lease; one idle for longer than the lease
 * could never commit under the fence anyway. The library sets that bound (plus
 * a grace that lets the fence speak first) itself: SET LOCAL, no startup
 * parameter a pooler could refuse.
 */
describe.each<{ label: string; extensions: NotificationsRetryExtensions }>([
  { label: 'on a bare pg client (SQL fence)', extensions: {} },
  {
    label: 'in TypeORM transactions (a lock without an SQL fence)',
    extensions: { distributedLock: UnfencedPostgresLock },
  },
])(
  'idle_in_transaction_session_timeout of row transactions, $label (real PostgreSQL)',
  ({ extensions }) => {
    let db: TestDatabase;
    let app: RetryTestApp;
    let ds: DataSource;

    beforeAll(async () => {
      db = await createTestDatabase();
      app = await createRetryTestApp({
        url: db.url,
        options: { lockTtlMs: 60_000, concurrency: 2 },
        extensions,
      });
      ds = app.dataSource;
    });

    afterAll(async () => {
      await app?.close();
      await db?.drop();
    });

    beforeEach(async () => {
      await app.reset();
      app.provider.respondWith((message) => ({ providerMessageId: `p-${message.id}` }));
      await insertChannel(ds, { key: 'email', maxAttempts: 3 });
    });

    it('is the lease TTL plus its grace inside every row transaction, and the session default after it', async () => {
      const now = app.clock.now();
      for (let i = 0; i < 3; i++) {
        await insertNotification(ds, {
          status: 'Failed',
          attempts: 1,
          nextAttemptAt: minutesAgo(now, 5 - i),
        });
      }
      const settings = await idleTimeoutsAtRowLocks(async () => {
        expect(completed(await app.cycles.runCycle()).counts).toMatchObject({ sent: 3, errors: 0 });
      });
      expect(settings).toEqual(Array(3).fill(String(60_000 + IDLE_IN_TRANSACTION_GRACE_MS)));
      const [{ setting }] = await ds.query<Array<{ setting: string }>>(IDLE_TIMEOUT_SETTING_SQL);
      expect(setting).toBe('0');
    });

    it('is the lease TTL plus its grace in the separate transaction that holds an unrecorded outcome', async () => {
      await insertNotification(ds, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(app.clock.now(), 2),
      });
      const write = extensions.distributedLock ? 'applyTransition' : 'applyTransitionFenced';
      const failure = jest
        .spyOn(NotificationRepository.prototype, write)
        .mockRejectedValueOnce(new Error('write failed'));
      let settings: string[];
      try {
        settings = await idleTimeoutsAtRowLocks(async () => {
          expect(completed(await app.cycles.runCycle()).counts).toMatchObject({ errors: 1 });
        });
      } finally {
        failure.mockRestore();
      }
      // The row's own transaction, then the one that records the attempt.
      expect(settings).toEqual(Array(2).fill(String(60_000 + IDLE_IN_TRANSACTION_GRACE_MS)));
      expect(app.logs.events('item-outcome-unrecorded')).toEqual([
        expect.objectContaining({ held: true }),
      ]);
    });
  },
);

describe('a pooled row transaction left idle past its bound (real PostgreSQL)', () => {
  let db: TestDatabase;
  let app: RetryTestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await createRetryTestApp({ url: db.url });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('costs no round trip: BEGIN and the bound are one simple query', async () => {
    const texts: Array<string | undefined> = [];
    await withQueryHook(
      (text) => void texts.push(text),
      () =>
        runInPooledPgTransaction(
          app.dataSource,
          { preparedStatements: true, idleInTransactionTimeoutMs: 45_000 },
          (executor) => executor.query('SELECT 1'),
        ),
    );
    // One call per round trip: pg sends a text without values as one Query message.
    expect(texts).toEqual([
      'BEGIN; SET LOCAL idle_in_transaction_session_timeout = 45000',
      'SELECT 1',
      'COMMIT',
    ]);
  });

  it('is ended by the server, which frees its row lock, and its client leaves the pool', async () => {
    const ds = app.dataSource;
    await insertChannel(ds, { key: 'email' });
    const id = await insertNotification(ds, { status: 'Failed', attempts: 1 });
    // An idle client in the pool, which the transaction will take: none is created meanwhile.
    await ds.query('SELECT 1');
    const pool = (ds.driver as unknown as { master: Pool }).master;
    const clientsBefore = pool.totalCount;
    const run = runInPooledPgTransaction(
      ds,
      { preparedStatements: false, idleInTransactionTimeoutMs: 300 },
      async (executor) => {
        await executor.query(`SELECT id FROM notifications WHERE id = $1 FOR UPDATE`, [id]);
        // A stuck worker: far longer than the bound without a statement.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await executor.query(`UPDATE notifications SET attempts = 9 WHERE id = $1`, [id]);
        return 'written';
      },
    );
    await expect(run).rejects.toThrow();
    // The dead client was not given back for reuse: the pool closed it.
    expect(pool.totalCount).toBe(clientsBefore - 1);
    expect(pool.idleCount).toBe(pool.totalCount);
    const rows: Array<{ attempts: number }> = await ds.query(
      `SELECT attempts FROM notifications WHERE id = $1 FOR UPDATE NOWAIT`,
      [id],
    );
    expect(rows).toEqual([{ attempts: 1 }]);
  });
});
