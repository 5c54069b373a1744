import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compileAcquireLease } from '../persistence/sql/acquire-lease.sql';
import { leaseFenceSql } from '../persistence/sql/lease-fence.sql';
import { compileReadLastCompletedCycle } from '../persistence/sql/read-last-completed-cycle.sql';
import { compileReleaseLease } from '../persistence/sql/release-lease.sql';
import { SqlRunner } from '../persistence/sql-runner';
import type { CompletedCycleRecord } from './completed-cycle-record';
import { DistributedLock, type LockReleaseOptions } from './distributed-lock';
import type { Lease } from './lease';
import type { LeaseFence } from './lease-fence';

/**
 * Lease in `distributed_locks`. One statement each way, and every time
 * comparison uses the database's clock, so clock skew between app instances
 * cannot make two of them believe they own the lease. The release of a
 * completed cycle records it in the lease row (`last_completed_at`,
 * `last_completed_by`), which /health reads on every instance.
 */
@Injectable()
export class PostgresDistributedLock extends DistributedLock {
  readonly fence: LeaseFence;
  private readonly acquireLease;
  private readonly releaseLease;
  private readonly readLastCompletedCycle;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    super();
    this.acquireLease = compileAcquireLease(dataSource);
    this.releaseLease = compileReleaseLease(dataSource);
    this.readLastCompletedCycle = compileReadLastCompletedCycle(dataSource);
    this.fence = {
      sql: leaseFenceSql(dataSource),
      params: (lease) => [lease.key, lease.owner, lease.fencingToken],
    };
  }

  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const [row] = await this.sql.run<{ fencing_token: string; acquired_at: Date }>(
      this.acquireLease,
      this.acquireLease.values({ key, owner, ttlMs }),
    );
    return row
      ? { key, owner, fencingToken: Number(row.fencing_token), acquiredAt: row.acquired_at }
      : null;
  }

  async release(lease: Lease, options: LockReleaseOptions = {}): Promise<void> {
    await this.sql.run(
      this.releaseLease,
      this.releaseLease.values({
        key: lease.key,
        owner: lease.owner,
        fencingToken: lease.fencingToken,
        cycleCompleted: options.cycleCompleted === true,
      }),
    );
  }

  override async lastCompletedCycle(key: string): Promise<CompletedCycleRecord> {
    const [row] = await this.sql.run<{
      database_now: Date;
      last_completed_at: Date | null;
      last_completed_by: string | null;
    }>(this.readLastCompletedCycle, this.readLastCompletedCycle.values({ key }));
    return { at: row.last_completed_at, by: row.last_completed_by, now: row.database_now };
  }
}
